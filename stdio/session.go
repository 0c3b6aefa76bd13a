package stdio

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// stdioSession is one run of the process and the go-sdk session on it. It
// ends once both have ended, with the first cause ([stdioSession.cause]).
type stdioSession struct {
	session.ClientRequests
	p    *proc
	info session.Info

	session.End               // Done, Err, Status, Fail (session.Verify), AfterEnd
	started     atomic.Bool   // the handshake succeeded
	closing     atomic.Bool   // Close began
	closeOnce   sync.Once     // Close's stop
	watched     chan struct{} // closed once watch has ended the session
}

// start runs the session once the handshake on cs succeeded.
func (s *stdioSession) start(cs *mcp.ClientSession, info session.Info) {
	s.ClientRequests, s.info = session.NewClientRequests(cs), info
	s.started.Store(true)
	go s.watch()
}

// facts is the session's facts middleware: a request's error is a
// classify.WrittenError when it was written whole to stdin (around an
// *AnswerRefusedError when its answer was refused), else a
// classify.NotSentError. One that failed with mcp.ErrConnectionClosed after
// the handshake returns once the session (or ctx) has ended.
func (s *stdioSession) facts(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		mark := new(callMark) // set by markingConn
		res, err := next(context.WithValue(ctx, markKey{}, mark), method, req)
		written, refused := mark.done()
		if err == nil {
			return res, nil
		}
		if refused != "" {
			return res, &classify.WrittenError{Err: &AnswerRefusedError{Method: method, Problem: refused}}
		}
		if s.started.Load() && errors.Is(err, mcp.ErrConnectionClosed) {
			select {
			case <-s.Done():
			case <-ctx.Done():
			}
		}
		if written {
			return res, &classify.WrittenError{Err: err}
		}
		return res, &classify.NotSentError{Err: err}
	}
}

// watch ends the session once go-sdk's session has ended and the process
// has exited (stopped unless it exits within exitDrain).
func (s *stdioSession) watch() {
	defer close(s.watched)
	err := s.ClientSession.Wait()
	s.p.stopUnlessExiting()
	exit := s.p.wait()
	s.End.Fail(s.cause(exit, err))
}

// cause is the first of what ended the session: the process's own exit,
// Close, go-sdk's error.
func (s *stdioSession) cause(exit *ProcessExitError, sdkErr error) error {
	switch {
	case exit != nil && exit.Stop == StopNone:
		return exit
	case s.closing.Load():
		return session.ErrClosed
	case sdkErr != nil:
		return sdkErr
	case exit != nil:
		return exit
	}
	return mcp.ErrConnectionClosed
}

// Alive is ping on every protocol version; a 2026-07-28 server's JSON-RPC
// -32601 (Method not found) for it is life: the process read and wrote.
func (s *stdioSession) Alive(ctx context.Context) error {
	err := s.ClientSession.Ping(ctx, nil)
	var rpc *jsonrpc.Error
	if err != nil && msgcheck.ModernVersion(s.info.ProtocolVersion) && errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeMethodNotFound {
		return nil
	}
	return err
}

// Info is the handshake's (no session id on stdio).
func (s *stdioSession) Info() session.Info { return s.info }

// Close stops the process (stdin, SIGTERM, SIGKILL), closes go-sdk's
// session and returns once the session has ended. Idempotent.
func (s *stdioSession) Close() error {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		s.p.stop() // first: the stop's steps are the process's to report
		_ = s.ClientSession.Close()
	})
	<-s.watched
	return nil
}

// Detach is Close: a process cannot be left for a later resume.
func (s *stdioSession) Detach() error { return s.Close() }

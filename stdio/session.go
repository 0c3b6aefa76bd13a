package stdio

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// stdioSession is one run of the process and the go-sdk session on it. It
// ends once (session.End), when both have ended: by the process's exit
// (*ProcessExitError), by a keepalive ping found dead (its error), or by
// Close (session.ErrClosed), the first cause winning.
type stdioSession struct {
	session.ClientRequests
	p    *proc
	info session.Info
	ka   *session.KeepAlive // nil without Options.KeepAlive

	end       session.End
	started   atomic.Bool   // the handshake succeeded
	closing   atomic.Bool   // Close began
	closeOnce sync.Once     // Close's stop
	watched   chan struct{} // closed once watch has ended the session
}

// start runs the session once the handshake on cs succeeded.
func (s *stdioSession) start(cs *mcp.ClientSession, info session.Info, o Options) {
	s.ClientRequests, s.info = session.NewClientRequests(cs), info
	if o.KeepAlive > 0 {
		s.ka = session.StartKeepAlive(o.Clock, o.KeepAlive, o.Logger, s.Alive, func() { s.p.stop() })
	}
	s.started.Store(true)
	go s.watch()
}

// facts is the session's facts middleware (session.Spec.Client):
// deliveryFacts, and a request that failed because the connection ended
// (mcp.ErrConnectionClosed: the process's exit, which go-sdk hands every
// request in flight, or Close) returns only once the session has ended,
// or its context has, so that the caller who saw the end finds Done
// closed, as session.Session promises. The handshake's requests do not
// wait: no session runs yet.
func (s *stdioSession) facts(next mcp.MethodHandler) mcp.MethodHandler {
	next = deliveryFacts(next)
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil && s.started.Load() && errors.Is(err, mcp.ErrConnectionClosed) {
			select {
			case <-s.end.Done():
			case <-ctx.Done():
			}
		}
		return res, err
	}
}

// watch ends the session once go-sdk's session has ended and the process
// has exited: the process stopped if it still runs (a process whose
// stdin refused a write, or that closed its stdout, has exitDrain to exit
// by itself).
func (s *stdioSession) watch() {
	defer close(s.watched)
	err := s.CS.Wait()
	s.p.stopUnlessExiting()
	exit := s.p.wait()
	s.ka.Stop()
	s.end.Fail(s.cause(exit, err))
}

// cause is the first of what ended the session: a keepalive ping found
// dead (it stopped the process); the process's exit by itself, before any
// stop; Close; go-sdk's error, with the process still running then
// stopped.
func (s *stdioSession) cause(exit *ProcessExitError, sdkErr error) error {
	if c := s.ka.EndedBy(); c != nil {
		return c
	}
	if exit != nil && exit.Stop == StopNone {
		return exit
	}
	if s.closing.Load() {
		return session.ErrClosed
	}
	if sdkErr == nil && exit != nil {
		return exit
	}
	if sdkErr == nil {
		return mcp.ErrConnectionClosed
	}
	return sdkErr
}

// Alive is ping, on every protocol version: a stdio session has no
// server/discover of its own to send (go-sdk's is unexported). A 2026-07-28
// server no longer serves ping and answers it with JSON-RPC -32601 (method
// not found; go-sdk mcp/server.go): that answer is taken as life, since the
// process read its stdin and wrote its stdout, all a keepalive asks; were it
// an error, the keepalive would stop (judgePing) and a hung server would
// never be found.
func (s *stdioSession) Alive(ctx context.Context) error {
	err := s.CS.Ping(ctx, nil)
	var rpc *jsonrpc.Error
	if err != nil && msgcheck.ModernVersion(s.info.ProtocolVersion) && errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeMethodNotFound {
		return nil
	}
	return err
}

// Info is the handshake's: no session id on stdio.
func (s *stdioSession) Info() session.Info { return s.info }

// Status is Live until Done, then Ended with a nil channel (Ended is
// final): a stdio session takes calls until it ends.
func (s *stdioSession) Status() (session.Status, <-chan struct{}) {
	done := s.end.Done()
	select {
	case <-done:
		return session.Ended, nil
	default:
		return session.Live, done
	}
}

func (s *stdioSession) Done() <-chan struct{} { return s.end.Done() }

// Fail ends the session from outside with err (session.Verify: an
// unanswered verification) unless it ended already; Done then closes
// before the process has exited, and the supervisor's Close stops it.
func (s *stdioSession) Fail(err error) bool { return s.end.Fail(err) }

// AfterEnd runs f once the session has ended (session.End.AfterEnd).
func (s *stdioSession) AfterEnd(f func()) { s.end.AfterEnd(f) }
func (s *stdioSession) Err() error        { return s.end.Err() }

// Close stops the process (Command: stdin, SIGTERM, SIGKILL), closes
// go-sdk's session and returns once the session has ended. Idempotent.
func (s *stdioSession) Close() error {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		s.ka.Stop()
		s.p.stop() // first: the stop's steps are the process's to report
		_ = s.CS.Close()
	})
	<-s.watched
	return nil
}

// Detach is Close: a process cannot be left for a later resume.
func (s *stdioSession) Detach() error { return s.Close() }

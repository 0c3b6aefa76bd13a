package httpsession

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpsup/mcpsup/httpsession/sse"
	"github.com/mcpsup/mcpsup/httpsession/wirebody"
)

// sseOwner decides for the [sseLoop] that reads its stream: the keeper
// ([streamBody]) and a call's answer ([answerStream]). Each method returns a
// message for go-sdk (nil: none) and whether the stream is done.
type sseOwner interface {
	event(ev sse.Event, line *sse.LineError) (jsonrpc.Message, bool) // a whole event, or a line without a colon
	ended(err error) (jsonrpc.Message, bool)                         // the answer ended with err (io.EOF: its end), its body closed
	redial() (jsonrpc.Message, bool)                                 // wait, then open the next answer ([sseLoop.open])
}

// sseLoop is the one loop over an event stream carried by successive HTTP
// answers: it reads with the one [sse.Reader], keeps the last event id (a
// re-dial's Last-Event-ID) and asks its [sseOwner] the rest. Close, from any
// goroutine, ends it; the rest runs on one goroutine.
type sseLoop struct {
	c      *conn
	ctx    context.Context // ended by Close (cause errStreamClosed) or the parent's end
	stop   context.CancelCauseFunc
	events sse.Reader
	wire   wirebody.Counter // the current answer's bytes on the wire
	lastID string
	moved  bool // an event id other than the last came since the answer opened

	mu   sync.Mutex
	body io.ReadCloser // the current answer's, nil between answers
}

func newLoop(c *conn, ctx context.Context, max int) sseLoop {
	ctx, stop := context.WithCancelCause(ctx)
	return sseLoop{c: c, ctx: ctx, stop: stop, events: sse.Reader{Max: max, BufferSize: readBufferSize}}
}

// readBufferSize is the size of a loop's read buffer, held while bytes are
// under way: a longer line is read in pieces.
const readBufferSize = 4 << 10

// next reads up to the next message or the stream's end.
func (l *sseLoop) next(o sseOwner) (jsonrpc.Message, bool) {
	for {
		if l.current() == nil {
			if msg, done := o.redial(); msg != nil || done {
				return msg, done
			}
			continue
		}
		ev, err := l.events.Next()
		var line *sse.LineError
		if err == nil || errors.As(err, &line) {
			if err == nil && ev.IDSet {
				l.moved = l.moved || ev.ID != l.lastID
				l.lastID = ev.ID
			}
			if msg, done := o.event(ev, line); msg != nil || done {
				return msg, done
			}
			continue
		}
		l.cut()
		if msg, done := o.ended(err); msg != nil || done {
			return msg, done
		}
	}
}

// open reads resp's body from now on, decoded (identity or gzip), as a new
// stream; another coding is refused, the body closed.
func (l *sseLoop) open(resp *http.Response) error {
	r, err := wirebody.Decode(resp, resp.Body, &l.wire)
	if err != nil {
		_ = resp.Body.Close()
		return err
	}
	l.events.Reset(r)
	l.moved = false
	l.mu.Lock()
	l.body = resp.Body
	l.mu.Unlock()
	if l.ctx.Err() != nil {
		_ = resp.Body.Close()
	}
	return nil
}

func (l *sseLoop) current() io.ReadCloser {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.body
}

func (l *sseLoop) cut() {
	l.mu.Lock()
	body := l.body
	l.body = nil
	l.mu.Unlock()
	if body != nil {
		_ = body.Close()
	}
}

// sleep waits for after or wake (nil: never); an error once the loop stops.
func (l *sseLoop) sleep(after <-chan time.Time, wake <-chan struct{}) (woken bool, err error) {
	select {
	case <-after:
		return false, nil
	case <-wake:
		return true, nil
	case <-l.ctx.Done():
		return false, context.Cause(l.ctx)
	}
}

// Close ends the loop for good; safe from any goroutine.
func (l *sseLoop) Close() error {
	l.stop(errStreamClosed)
	l.cut()
	return nil
}

var errStreamClosed = errors.New("mcpsup/httpsession: standalone stream closed")

package session_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/session"
)

// inner is a scripted Session: each CallTool answers the next of calls
// (nil: success), each Alive the alive func.
type inner struct {
	end      session.End
	mu       sync.Mutex
	calls    []func() error
	alive    func(context.Context) error
	alives   atomic.Int32
	detached chan struct{}
	once     sync.Once
}

func newInner() *inner { return &inner{detached: make(chan struct{})} }

func (f *inner) script(errs ...error) {
	for _, err := range errs {
		f.scriptFunc(func() error { return err })
	}
}

func (f *inner) scriptFunc(answer func() error) {
	f.mu.Lock()
	f.calls = append(f.calls, answer)
	f.mu.Unlock()
}

func (f *inner) CallTool(context.Context, *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	f.mu.Lock()
	if len(f.calls) == 0 {
		f.mu.Unlock()
		return &mcp.CallToolResult{}, nil
	}
	answer := f.calls[0]
	f.calls = f.calls[1:]
	f.mu.Unlock()
	return nil, answer()
}
func (f *inner) Alive(ctx context.Context) error {
	f.alives.Add(1)
	if f.alive == nil {
		return nil
	}
	return f.alive(ctx)
}
func (f *inner) ListTools(context.Context, string) ([]*mcp.Tool, string, error) {
	return nil, "", nil
}
func (f *inner) ListResources(context.Context, string) ([]*mcp.Resource, string, error) {
	return nil, "", nil
}
func (f *inner) ListPrompts(context.Context, string) ([]*mcp.Prompt, string, error) {
	return nil, "", nil
}
func (f *inner) ListResourceTemplates(context.Context, string) ([]*mcp.ResourceTemplate, string, error) {
	return nil, "", nil
}
func (f *inner) GetPrompt(context.Context, *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return nil, nil
}
func (f *inner) ReadResource(context.Context, *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return nil, nil
}
func (f *inner) Complete(context.Context, *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return nil, nil
}
func (f *inner) Subscribe(context.Context, *mcp.SubscribeParams) error     { return nil }
func (f *inner) Unsubscribe(context.Context, *mcp.UnsubscribeParams) error { return nil }

//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
func (f *inner) SetLoggingLevel(context.Context, *mcp.SetLoggingLevelParams) error { return nil }
func (f *inner) Info() session.Info                                                { return session.Info{ID: "s1"} }
func (f *inner) Status() (session.Status, <-chan struct{}) {
	if f.end.Ended() {
		return session.Ended, nil
	}
	return session.Live, f.end.Done()
}
func (f *inner) Done() <-chan struct{} { return f.end.Done() }
func (f *inner) Fail(err error) bool   { return f.end.Fail(err) }
func (f *inner) AfterEnd(fn func())    { f.end.AfterEnd(fn) }
func (f *inner) Err() error            { return f.end.Err() }
func (f *inner) Close() error          { f.end.Fail(session.ErrClosed); return nil }
func (f *inner) Detach() error {
	f.end.Fail(session.ErrDetached)
	f.once.Do(func() { close(f.detached) })
	return nil
}

var (
	gone  = &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 404, SessionIDSent: true}}
	reset = &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call"}, Err: io.ErrUnexpectedEOF}
)

type facts struct {
	mu  sync.Mutex
	got []session.Verified
	ch  chan struct{}
}

func newFacts() *facts { return &facts{ch: make(chan struct{}, 16)} }

func (f *facts) observe(x session.Fact) {
	f.mu.Lock()
	f.got = append(f.got, x.(session.Verified))
	f.mu.Unlock()
	f.ch <- struct{}{}
}

func (f *facts) all() []session.Verified {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]session.Verified(nil), f.got...)
}

func call(t *testing.T, s session.Session) error {
	t.Helper()
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "a"})
	return err
}

// streamable-http.mdx, Session Management: "When a client receives HTTP
// 404 in response to a request containing an MCP-Session-Id, it MUST start
// a new session". The session has ended before the call returns, so the
// next call sees Ended; no Alive is spent on it, and the session is
// stopped without DELETE (detached).
func TestVerifyEndsASessionGoneBeforeTheCallReturns(t *testing.T) {
	defer goleak.VerifyNone(t)
	in := newInner()
	in.script(gone)
	s := session.Verify(in, session.VerifyConfig{})
	require.ErrorIs(t, call(t, s), gone)
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed when the call returned")
	}
	require.ErrorIs(t, s.Err(), gone)
	st, _ := s.Status()
	require.Equal(t, session.Ended, st)
	require.Zero(t, in.alives.Load())
	require.NoError(t, s.Detach())
	<-in.detached
	require.ErrorIs(t, s.Err(), gone, "the first cause wins")
}

// Failure story S4: answers that keep the session (500, 429, 403, 401, a
// JSON-RPC error) and a caller that gave up cost no Alive and leave it
// live.
func TestVerifyKeepsTheSessionOnAnswers(t *testing.T) {
	defer goleak.VerifyNone(t)
	in := newInner()
	for _, code := range []int{500, 429, 403, 401} {
		in.script(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: code, SessionIDSent: true}})
	}
	s := session.Verify(in, session.VerifyConfig{})
	for range 4 {
		require.Error(t, call(t, s))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in.script(reset)
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "a"})
	require.Error(t, err)
	st, _ := s.Status()
	require.Equal(t, session.Live, st)
	require.Zero(t, in.alives.Load())
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Err(), session.ErrClosed)
}

// A burst of resets costs one Alive: while it runs the session is
// Verifying and further failures join it; once answered, a failure of a
// request sent before it went out costs nothing more, one sent after it
// starts the next verification.
func TestVerifyABurstOfResetsCostsOneAlive(t *testing.T) {
	defer goleak.VerifyNone(t)
	in := newInner()
	gate := make(chan struct{})
	in.alive = func(ctx context.Context) error {
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f := newFacts()
	s := session.Verify(in, session.VerifyConfig{Observe: f.observe})

	// A request in flight before the verification, failing after it.
	sent, release := make(chan struct{}), make(chan struct{})
	in.scriptFunc(func() error { close(sent); <-release; return reset })
	late := make(chan error, 1)
	go func() { late <- call(t, s) }()
	<-sent
	in.script(reset, reset)
	for range 2 {
		require.ErrorIs(t, call(t, s), io.ErrUnexpectedEOF)
	}
	st, ch := s.Status()
	require.Equal(t, session.Verifying, st)
	close(gate)
	<-ch
	<-f.ch
	st, _ = s.Status()
	require.Equal(t, session.Live, st)
	require.Equal(t, int32(1), in.alives.Load())
	require.Equal(t, []session.Verified{{Alive: true}}, f.all())
	close(release)
	require.ErrorIs(t, <-late, io.ErrUnexpectedEOF)
	st, _ = s.Status()
	require.Equal(t, session.Live, st, "answered for by the Alive sent after it")
	require.Equal(t, int32(1), in.alives.Load())

	// Sent after the answer: a new verification.
	in.script(reset)
	require.Error(t, call(t, s))
	<-f.ch
	require.NoError(t, s.Close()) // waits for every verification
	require.Equal(t, int32(2), in.alives.Load(), "one for the burst, one for the later reset")
	require.Len(t, f.all(), 2)
}

// An Alive that gets no answer (a transport failure, or nothing within
// Timeout on the clock) ends the session with its error; the Verified fact
// comes first.
func TestVerifyUnansweredEndsTheSession(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Run("refused", func(t *testing.T) {
		in := newInner()
		in.alive = func(context.Context) error { return reset }
		in.script(reset)
		f := newFacts()
		s := session.Verify(in, session.VerifyConfig{Observe: f.observe})
		require.Error(t, call(t, s))
		<-s.Done()
		require.ErrorIs(t, s.Err(), io.ErrUnexpectedEOF)
		require.Equal(t, classify.Transport, classify.Error(s.Err()).Class)
		got := f.all()
		require.Len(t, got, 1)
		require.False(t, got[0].Alive)
		require.NoError(t, s.Detach())
	})
	t.Run("timeout", func(t *testing.T) {
		in := newInner()
		in.alive = func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
		in.script(reset)
		clock := clockwork.NewFakeClock()
		s := session.Verify(in, session.VerifyConfig{Clock: clock, Timeout: 3 * time.Second})
		require.Error(t, call(t, s))
		require.NoError(t, clock.BlockUntilContext(context.Background(), 1))
		clock.Advance(3 * time.Second)
		<-s.Done()
		require.ErrorIs(t, s.Err(), context.DeadlineExceeded)
		require.Equal(t, classify.Timeout, classify.Error(s.Err()).Class)
		require.NoError(t, s.Close())
	})
}

// A session that ends by itself (a process exit, a keepalive) ends the
// decorated one with the same cause.
func TestVerifyFollowsTheInnerEnd(t *testing.T) {
	defer goleak.VerifyNone(t)
	in := newInner()
	s := session.Verify(in, session.VerifyConfig{})
	cause := errors.New("exited")
	in.end.Fail(cause)
	<-s.Done()
	require.ErrorIs(t, s.Err(), cause)
	require.NoError(t, s.Close())
}

// A status channel taken while the session was live is closed when the inner
// session ends by itself: a caller waiting for the status to change sees
// Ended, not a channel that never closes.
func TestVerifyStatusWakesAtTheInnerEnd(t *testing.T) {
	defer goleak.VerifyNone(t)
	in := newInner()
	s := session.Verify(in, session.VerifyConfig{})
	st, changed := s.Status()
	require.Equal(t, session.Live, st)
	in.end.Fail(errors.New("exited"))
	select {
	case <-changed:
	default:
		t.Fatal("the status channel stayed open after the session ended")
	}
	st, _ = s.Status()
	require.Equal(t, session.Ended, st)
	require.NoError(t, s.Close())
}

// endsWhileAsked is a session that ends between answering Status Live and
// its caller's next step: the end of a session racing a Status.
type endsWhileAsked struct{ *inner }

func (e endsWhileAsked) Status() (session.Status, <-chan struct{}) {
	st, ch := e.inner.Status()
	e.end.Fail(errors.New("exited"))
	return st, ch
}

// Session.Status answers "with a channel closed at the next change".
// A session that ends while Status reads it (the inner one said Live, its
// end woke no channel yet) answers Ended, or a channel its end closes: a
// waiter is never left on a channel nothing will close.
func TestVerifyStatusRacingTheEndNeverStrandsAWaiter(t *testing.T) {
	defer goleak.VerifyNone(t)
	in := endsWhileAsked{newInner()}
	s := session.Verify(in, session.VerifyConfig{})
	st, changed := s.Status()
	if st != session.Ended {
		select {
		case <-changed:
		default:
			t.Fatalf("Status answered %v with a channel the session's end did not close", st)
		}
	}
	require.NoError(t, s.Close())
}

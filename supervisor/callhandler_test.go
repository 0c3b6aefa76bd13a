package supervisor

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/internal/lockedbuf"
)

// stageRecorder is a CallHandler that records, per call, what it was told.
type stageRecorder struct {
	mu     sync.Mutex
	infos  []CallInfo
	stages []CallStage
}

type callTag struct{}

func (r *stageRecorder) TagCall(ctx context.Context, info CallInfo) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.infos = append(r.infos, info)
	return context.WithValue(ctx, callTag{}, len(r.infos))
}

func (r *stageRecorder) HandleCall(ctx context.Context, s CallStage) {
	if ctx.Value(callTag{}) == nil {
		panic("HandleCall without the context TagCall returned")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stages = append(r.stages, s)
}

func (r *stageRecorder) got() ([]CallInfo, []CallStage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]CallInfo(nil), r.infos...), append([]CallStage(nil), r.stages...)
}

func TestCallHandlerHearsTheWaitForReady(t *testing.T) {
	h := &stageRecorder{}
	r := newRig(t, Config{Observe: ObserveConfig{CallHandler: h}})
	r.sup.Start()
	req := r.next() // connecting: the call must wait

	errc := r.callAsync(r.ctx, "a")
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1), "the call waits on its MaxCallWait timer")
	r.clock.Advance(2 * time.Second)
	req.ok(newFakeSession("s1", "a"))
	require.NoError(t, <-errc)

	infos, stages := h.got()
	require.Equal(t, []CallInfo{{Server: "fake", Op: "tools/call", Name: "a"}}, infos)
	require.Equal(t, []CallStage{
		&CallWaited{From: Connecting, FromGeneration: 1, Waited: 2 * time.Second, Generation: 1},
		&CallEnd{},
	}, stages)
}

func TestCallHandlerHearsTheSessionACallCost(t *testing.T) {
	h := &stageRecorder{}
	r := newRig(t, Config{Observe: ObserveConfig{CallHandler: h}})
	old := newFakeSession("s1", "a")
	r.ready(old)

	// S4: a 429 is an application answer, the session stays.
	old.failNextCall(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 429}})
	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.Error(t, err)
	_, stages := h.got()
	require.Len(t, stages, 1, "a failure that keeps the session tells only its end")
	require.Equal(t, err, stages[0].(*CallEnd).Err)

	// An expired session is replaced.
	old.failNextCall(&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 404, SessionIDSent: true}})
	_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.Error(t, err)
	_, stages = h.got()
	require.Len(t, stages, 3)
	lost, ok := stages[1].(*CallSessionLost)
	require.True(t, ok, "got %T", stages[1])
	require.Equal(t, uint64(1), lost.Generation)
	require.Equal(t, classify.SessionExpired, lost.Verdict.Class)
	require.Equal(t, err, stages[2].(*CallEnd).Err)
	// The next call waits for the new session and goes out on it alone.
	errc := r.callAsync(r.ctx, "a")
	fresh := newFakeSession("s2", "a")
	r.next().ok(fresh)
	require.NoError(t, <-errc)
	require.Equal(t, []string{"a", "a"}, old.toolCalls())
	require.Equal(t, []string{"a"}, fresh.toolCalls())
}

func TestCallHandlerHearsACallRefusedWhileNotReady(t *testing.T) {
	h := &stageRecorder{}
	r := newRig(t, Config{Observe: ObserveConfig{CallHandler: h}, Limits: LimitsConfig{MaxCallWait: 5 * time.Second}})
	r.sup.Start()
	r.next() // never answered

	errc := r.callAsync(context.Background(), "a")
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
	r.clock.Advance(5 * time.Second)
	err := <-errc
	require.ErrorIs(t, err, ErrWaitTimeout)
	_, stages := h.got()
	require.Equal(t, []CallStage{
		&CallWaited{From: Connecting, FromGeneration: 1, Waited: 5 * time.Second},
		&CallEnd{Err: err},
	}, stages)
}

func TestCallHandlerHearsAResend(t *testing.T) {
	h := &stageRecorder{}
	r := newRig(t, Config{Recovery: RecoveryConfig{Resend: ResendSafe}, Observe: ObserveConfig{CallHandler: h}})
	sess := newFakeSession("s1", "a")
	sess.callErr = &classify.NotSentError{Err: io.EOF}
	r.ready(sess)
	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.NoError(t, err, "the resend was answered")
	_, stages := h.got()
	resent, ok := stages[0].(*CallResent)
	require.True(t, ok, "got %T", stages[0])
	require.Equal(t, NotSent, resent.Err.Delivery)
	require.Equal(t, &CallEnd{}, stages[len(stages)-1])
	for _, st := range stages[1 : len(stages)-1] {
		// The second sending may wait while the session is verified.
		require.Equal(t, &CallWaited{From: Ready, FromGeneration: 1, Generation: 1}, st)
	}
}

// panicker is a CallHandler whose every method panics; nilTag makes TagCall
// return nil instead.
type panicker struct {
	nilTag bool
	mu     sync.Mutex
	stages int
}

func (p *panicker) TagCall(context.Context, CallInfo) context.Context {
	if p.nilTag {
		return nil
	}
	panic("tag")
}

func (p *panicker) HandleCall(context.Context, CallStage) {
	p.mu.Lock()
	p.stages++
	p.mu.Unlock()
	panic("stage")
}

// A handler that panics, or tags nil, never costs the caller the call's
// outcome: the result comes back, the panic is logged, every stage is still
// told.
func TestCallHandlerThatPanicsDoesNotBreakTheCall(t *testing.T) {
	for _, nilTag := range []bool{false, true} {
		var logs lockedbuf.Buffer
		h := &panicker{nilTag: nilTag}
		r := newRig(t, Config{Observe: ObserveConfig{CallHandler: h, Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
		r.sup.Start()
		req := r.next()
		errc := r.callAsync(r.ctx, "a") // waits: a CallWaited stage
		require.NoError(t, r.clock.BlockUntilContext(r.ctx, 1))
		sess := newFakeSession("s1", "a")
		req.ok(sess)
		require.NoError(t, <-errc, "nil tag %v", nilTag)
		require.Equal(t, []string{"a"}, sess.toolCalls(), "sent once")
		h.mu.Lock()
		require.Equal(t, 2, h.stages, "waited and end")
		h.mu.Unlock()
		require.Contains(t, logs.String(), "HandleCall panicked")
		if !nilTag {
			require.Contains(t, logs.String(), "TagCall panicked")
		}
	}
}

// endRecorder notes, at each call's CallEnd, whether Close had returned.
type endRecorder struct {
	closed    atomic.Bool // set by the test once Close returned
	ends      atomic.Int32
	afterStop atomic.Int32
}

func (e *endRecorder) TagCall(ctx context.Context, _ CallInfo) context.Context { return ctx }

func (e *endRecorder) HandleCall(_ context.Context, s CallStage) {
	if _, ok := s.(*CallEnd); !ok {
		return
	}
	runtime.Gosched() // let a Close that does not wait for this stage run ahead
	if e.closed.Load() {
		e.afterStop.Add(1)
	}
	e.ends.Add(1)
}

// Close waits for the calls in flight to end, their handler's CallEnd
// included: a tracer shut down after Close loses no span.
func TestCloseWaitsForTheCallHandlersLastStage(t *testing.T) {
	const n = 8
	h := &endRecorder{}
	r := newRig(t, Config{Observe: ObserveConfig{CallHandler: h}})
	sess := newFakeSession("s1", "a")
	sess.callHang = true
	r.ready(sess)
	var errs []<-chan error
	for range n {
		errs = append(errs, r.callAsync(context.Background(), "a"))
	}
	r.until("the calls sent", func() bool { return len(sess.toolCalls()) == n })
	require.NoError(t, r.sup.Close())
	h.closed.Store(true)
	require.Equal(t, int32(n), h.ends.Load(), "every CallEnd was told before Close returned")
	require.Zero(t, h.afterStop.Load())
	for _, errc := range errs {
		require.ErrorIs(t, <-errc, ErrClosed)
	}
}

package supervisor

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
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
	r := newRig(t, Config{CallHandler: h})
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
	r := newRig(t, Config{CallHandler: h})
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
	require.NotEqual(t, Ready, lost.To)
	require.Equal(t, err, stages[2].(*CallEnd).Err)
}

func TestCallHandlerHearsACallRefusedWhileNotReady(t *testing.T) {
	h := &stageRecorder{}
	r := newRig(t, Config{CallHandler: h, MaxCallWait: 5 * time.Second})
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
	r := newRig(t, Config{Resend: ResendSafe, CallHandler: h})
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

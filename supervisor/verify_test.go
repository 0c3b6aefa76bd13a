package supervisor

import (
	"context"
	"io"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// gatedPing is a ping answered once gate closes.
func gatedPing(gate chan struct{}) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// A call whose request got no answer (a reset: transport) costs one ping
// on its session (seam.Verify); a call made meanwhile waits for the
// ping's outcome instead of going out on a session that may be dead.
// Answered, it goes out on the same session: the generation stays and one
// ping was sent.
func TestCallsWaitForAVerificationAnswered(t *testing.T) {
	r := newRig(t, Config{})
	sess := newFakeSession("s1", "a")
	gate := make(chan struct{})
	var pings atomic.Int32
	ping := gatedPing(gate)
	sess.pingFn = func(ctx context.Context) error { pings.Add(1); return ping(ctx) }
	r.ready(sess)

	sess.failNextCall(&classify.NotSentError{Err: io.EOF})
	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.Error(t, err)
	errc := r.callAsync(r.ctx, "a")
	// The verification's bound (ProbeTimeout) and the call's MaxCallWait:
	// the call waits.
	require.NoError(t, r.clock.BlockUntilContext(r.ctx, 2))
	require.Equal(t, []string{"a"}, sess.toolCalls(), "not sent while the session is verified")
	close(gate)
	require.NoError(t, <-errc, "sent once the session answered")
	require.Equal(t, []string{"a", "a"}, sess.toolCalls())
	require.Equal(t, int32(1), pings.Load())
	require.Equal(t, uint64(1), r.sup.Generation())
	verified := r.eventsOf(events.KindSessionVerified)
	require.Len(t, verified, 1)
	require.Equal(t, classify.None, verified[0].Verdict.Class)
}

// Not answered: the session ended by itself; it is released without
// DELETE, and the waiting call goes out on the new session.
func TestCallsWaitForAVerificationUnanswered(t *testing.T) {
	r := newRig(t, Config{})
	old := newFakeSession("s1", "a")
	old.pingFn = func(context.Context) error { return &classify.NotSentError{Err: io.EOF} }
	r.ready(old)

	old.failNextCall(&classify.NotSentError{Err: io.EOF})
	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.Error(t, err)
	errc := r.callAsync(r.ctx, "a")
	req := r.next()
	require.Equal(t, uint64(2), req.spec.gen)
	fresh := newFakeSession("s2", "a")
	req.ok(fresh)
	require.NoError(t, <-errc)
	require.Equal(t, []string{"a"}, old.toolCalls())
	require.Equal(t, []string{"a"}, fresh.toolCalls())
	r.until("the dead session released", func() bool { _, d := old.counts(); return d > 0 })
	closed, detached := old.counts()
	require.Zero(t, closed, "a dead session is released without DELETE")
	require.Equal(t, 1, detached)
	verified := r.eventsOf(events.KindSessionVerified)
	require.Len(t, verified, 1)
	require.Equal(t, classify.Transport, verified[0].Verdict.Class)
}

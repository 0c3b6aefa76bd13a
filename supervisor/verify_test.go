package supervisor

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	seam "github.com/mcpsup/mcpsup/session"
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
	require.True(t, verified[0].Alive)
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
	require.False(t, verified[0].Alive)
}

// seamDialer is a seam.Dialer that hands out one fake session per Dial,
// building its client as a transport does, and keeps the specs it was
// given.
type seamDialer struct {
	sess  []*fakeSession
	specs chan seam.Spec
}

func (d *seamDialer) Dial(_ context.Context, sp seam.Spec) (seam.Endable, error) {
	if sp.Client(func(next mcp.MethodHandler) mcp.MethodHandler { return next }) == nil {
		return nil, errors.New("no client")
	}
	d.specs <- sp
	s := d.sess[0]
	d.sess = d.sess[1:]
	return s, nil
}

func (d *seamDialer) Attach(context.Context, seam.Spec) (seam.Endable, error) {
	return nil, seam.ErrNoResume
}

// The loop drives a transport's seam.Dialer through seamConnector: the
// spec names the generation and builds the session's client; the
// transport's facts become events (a declined push stream also makes the
// session polled); a session that ends by itself is replaced; Close
// closes the live one.
func TestSeamConnectorDrivesADialer(t *testing.T) {
	r := newRig(t, Config{})
	first, second := newFakeSession("s1", "a"), newFakeSession("s2", "a")
	first.setBell(r.conn.bell)
	second.setBell(r.conn.bell)
	d := &seamDialer{sess: []*fakeSession{first, second}, specs: make(chan seam.Spec, 2)}
	r.sup.dial = &seamConnector{s: r.sup, d: d}
	r.sup.Start()
	r.wait(Ready)
	sp := <-d.specs
	require.Equal(t, uint64(1), sp.Generation)
	require.Nil(t, sp.Resume)

	sp.Observe(seam.StreamDeclined{Status: 405, ContentType: "text/plain"})
	declined := r.waitEvents(events.KindStreamDeclined, 1)
	require.Equal(t, 405, declined[0].HTTPStatus)
	require.Equal(t, "text/plain", declined[0].ContentType)
	require.True(t, r.sup.held(1).declined.Load(), "its catalog is polled")

	first.die(mcpSessionMissing())
	r.until("ready on gen 2", func() bool { return r.sup.State() == Ready && r.sup.Generation() == 2 })
	require.Equal(t, uint64(2), (<-d.specs).Generation)
	r.until("the ended session released", func() bool { _, d := first.counts(); return d > 0 })
	_, detached := first.counts()
	require.Equal(t, 1, detached, "a session that ended by itself is released without DELETE")
	require.NoError(t, r.sup.Close())
	closed, _ := second.counts()
	require.Equal(t, 1, closed)
}

// The host's Ping is judged as a call: a 404 to it (the session id sent)
// ends the session, and the next call goes out on a new one.
func TestHostPingAnsweredSessionGoneReplacesTheSession(t *testing.T) {
	r := newRig(t, Config{})
	old := newFakeSession("s1", "a")
	old.pingFn = func(context.Context) error {
		return &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "ping", Status: 404, SessionIDSent: true}}
	}
	r.ready(old)
	err := r.sup.Ping(r.ctx)
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.SessionExpired, ce.Verdict.Class)
	errc := r.callAsync(r.ctx, "a")
	fresh := newFakeSession("s2", "a")
	r.next().ok(fresh)
	require.NoError(t, <-errc)
	require.Empty(t, old.toolCalls())
	require.Equal(t, []string{"a"}, fresh.toolCalls())
}

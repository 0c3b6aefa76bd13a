package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
)

// clocksOf returns the bounded calls registered for token.
func (r *rig) clocksOf(token any) []*callClock { return clocksOf(&r.sup.progress, token) }

func clocksOf(p *progressCalls, token any) []*callClock {
	key, _ := progressKey(token)
	return p.of(key)
}

// Progress notifications for a call start its CallTimeout over, up to
// CallTimeoutCeiling from its send; a silent call still times out.
func TestProgressExtendsCallTimeoutUpToTheCeiling(t *testing.T) {
	r := newRig(t, Config{Limits: LimitsConfig{CallTimeout: time.Minute, CallTimeoutCeiling: 3 * time.Minute}})
	sess := newFakeSession("s1", "slow")
	sess.callHang = true
	r.ready(sess)

	p := &mcp.CallToolParams{Name: "slow"}
	p.SetProgressToken(7) // comes back in notifications as 7.0
	errc := make(chan error, 1)
	go func() { _, err := r.sup.CallTool(context.Background(), p); errc <- err }()
	r.until("the call sent", func() bool { return len(sess.toolCalls()) == 1 && len(r.clocksOf(7)) == 1 })
	c := r.clocksOf(7)[0]
	start := r.clock.Now()
	require.Equal(t, start.Add(time.Minute), c.when(), "CallTimeout")

	// Three progress notifications, 50s apart: the third would start the
	// timeout over past the ceiling, so it is capped there (180s).
	for i := 1; i <= 3; i++ {
		r.clock.Advance(50 * time.Second)
		r.sup.progress.progressed(7.0)
		want := r.clock.Now().Add(min(time.Minute, start.Add(3*time.Minute).Sub(r.clock.Now())))
		require.Equal(t, want, c.when(), "progress %d starts the timeout over, capped by the ceiling", i)
	}
	select {
	case err := <-errc:
		t.Fatalf("the call ended at %s despite progress: %v", r.clock.Now().Sub(start), err)
	default:
	}
	r.clock.Advance(start.Add(3 * time.Minute).Sub(r.clock.Now())) // the ceiling
	err := <-errc
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, classify.Timeout, ce.Verdict.Class, "verdict %s", ce.Verdict)
	require.Empty(t, r.clocksOf(7), "released")
}

// Without progress the call ends at CallTimeout; progress for another token
// does not extend it.
func TestSilentCallTimesOutAtCallTimeout(t *testing.T) {
	r := newRig(t, Config{Limits: LimitsConfig{CallTimeout: time.Minute}})
	sess := newFakeSession("s1", "slow")
	sess.callHang = true
	r.ready(sess)
	p := &mcp.CallToolParams{Name: "slow"}
	p.SetProgressToken("mine")
	errc := make(chan error, 1)
	go func() { _, err := r.sup.CallTool(context.Background(), p); errc <- err }()
	r.until("the call sent", func() bool { return len(r.clocksOf("mine")) == 1 })
	r.clock.Advance(30 * time.Second)
	r.sup.progress.progressed("other")
	r.sup.progress.progressed(nil)
	require.Equal(t, r.clock.Now().Add(30*time.Second), r.clocksOf("mine")[0].when())
	r.clock.Advance(30 * time.Second)
	var ce *CallError
	require.ErrorAs(t, <-errc, &ce)
	require.Equal(t, classify.Timeout, ce.Verdict.Class)
}

func TestCallTimeoutCeilingDefaults(t *testing.T) {
	require.Equal(t, DefaultCallTimeoutCeiling, Config{}.withDefaults().Limits.CallTimeoutCeiling)
	require.Equal(t, 2*time.Hour, Config{Limits: LimitsConfig{CallTimeout: 2 * time.Hour}}.withDefaults().Limits.CallTimeoutCeiling, "never below CallTimeout")
}

// End to end: a blocked tool on a real server sends notifications/progress
// for the call's token; each one starts the call's CallTimeout over (on the
// fake clock), and the host's own progress handler still hears it.
func TestProgressFromARealServerExtendsTheCall(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	clock := clockwork.NewFakeClock()
	heard := make(chan any, 4)
	cfg := Config{
		Endpoint: srv.URL(),
		HTTP:     HTTPConfig{HTTPClient: srv.HTTPClient()},
		Observe:  ObserveConfig{Clock: clock},
		Limits: LimitsConfig{
			CallTimeout:         time.Minute,
			CatalogPollInterval: -1,
		},
		Stream: StreamConfig{Policy: StreamOff},
		Client: ClientConfig{ClientOptions: mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			heard <- r.Params.ProgressToken
		}}},
	}
	sup, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, Ready))

	p := &mcp.CallToolParams{Name: mcptest.BlockTool, Arguments: mcptest.IDArgs{ID: "p"}}
	p.SetProgressToken("tok")
	errc := make(chan error, 1)
	callCtx, stopCall := context.WithCancel(context.Background()) // no deadline: CallTimeout bounds it
	defer stopCall()
	go func() { _, err := sup.CallTool(callCtx, p); errc <- err }()
	require.NoError(t, srv.WaitBlocked(ctx, "p"))
	c := clocksOf(&sup.progress, "tok")[0]

	clock.Advance(40 * time.Second)
	srv.Progress("p")
	select {
	case tok := <-heard:
		require.Equal(t, "tok", tok)
	case <-ctx.Done():
		t.Fatal("no progress reached the host")
	}
	require.Equal(t, clock.Now().Add(time.Minute), c.when(), "the progress started the timeout over")
	srv.Release("p")
	require.NoError(t, <-errc)
}

// A context derived from a call's clock (net/http derives one per request)
// registers with the clock, as with the context package's own types: it
// starts no goroutine to watch Done, ends when the clock does, and leaves
// the clock when it ends first. Through httpsession.WithExchange too, which every
// call's context passes through.
func TestCallClockTakesDerivedContextsWithoutAGoroutine(t *testing.T) {
	for name, wrap := range map[string]func(context.Context) context.Context{
		"direct":        func(c context.Context) context.Context { return c },
		"with exchange": httpsession.WithExchange,
	} {
		t.Run(name, func(t *testing.T) {
			clock := newCallClock(context.Background(), clockwork.NewFakeClock(), time.Minute, time.Hour)
			registered := func() int {
				clock.mu.Lock()
				defer clock.mu.Unlock()
				return len(clock.after)
			}
			first, cancelFirst := context.WithCancel(wrap(clock))
			second, cancelSecond := context.WithCancelCause(wrap(clock))
			defer cancelSecond(nil)
			require.Equal(t, 2, registered(), "both derived contexts registered with the clock")
			cancelFirst()
			require.Equal(t, 1, registered(), "a derived context that ended first left the clock")
			require.NoError(t, second.Err())

			clock.cancel()
			<-second.Done()
			require.ErrorIs(t, second.Err(), context.Canceled)
			require.ErrorIs(t, first.Err(), context.Canceled)
			require.Equal(t, 0, registered())

			late, cancelLate := context.WithCancel(wrap(clock))
			defer cancelLate()
			<-late.Done() // derived from an ended clock: ends at once
		})
	}
}

// A call to a ready connection waits for nothing, so it makes no snapshot
// change channel: one would be kept until the next change.
func TestReadyCallMakesNoChangeChannel(t *testing.T) {
	r := newRig(t, Config{})
	r.ready(newFakeSession("s1", "echo"))
	r.sup.mu.Lock()
	r.sup.changed = nil // the rig's own waits made one
	r.sup.mu.Unlock()
	_, err := r.sup.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"})
	require.NoError(t, err)
	r.sup.mu.Lock()
	defer r.sup.mu.Unlock()
	require.Nil(t, r.sup.changed)
}

// when returns when the call times out unless progress comes first.
func (c *callClock) when() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expiry
}

// A host that gives two calls in flight one progress token breaks "MUST be
// unique across all active requests" (MCP 2025-11-25 basic/utilities/
// progress); the server's notifications/progress for it cannot say which
// call progressed, so each extends both: neither times out at CallTimeout
// while the token progresses, and each is forgotten on its own return.
func TestProgressOfATokenTwoCallsShareExtendsBoth(t *testing.T) {
	r := newRig(t, Config{Limits: LimitsConfig{CallTimeout: time.Minute, CallTimeoutCeiling: 3 * time.Minute}})
	sess := newFakeSession("s1", "slow")
	sess.callHang = true
	r.ready(sess)

	errc := make(chan error, 2)
	for range 2 {
		p := &mcp.CallToolParams{Name: "slow"}
		p.SetProgressToken("shared")
		go func() { _, err := r.sup.CallTool(context.Background(), p); errc <- err }()
	}
	r.until("both calls sent", func() bool { return len(sess.toolCalls()) == 2 })
	sess.mu.Lock()
	var clocks []*callClock
	for _, ctx := range sess.callCtxs {
		c, ok := ctx.(*callClock)
		require.True(t, ok, "the session gets the call's clock, %T", ctx)
		clocks = append(clocks, c)
	}
	sess.mu.Unlock()

	r.clock.Advance(50 * time.Second)
	r.sup.progress.progressed("shared")
	for i, c := range clocks {
		require.Equal(t, r.clock.Now().Add(time.Minute), c.when(), "call %d: the token's progress starts its timeout over", i)
	}
	r.clock.Advance(3 * time.Minute) // the ceiling: both end
	for range 2 {
		var ce *CallError
		require.ErrorAs(t, <-errc, &ce)
		require.Equal(t, classify.Timeout, ce.Verdict.Class)
	}
	require.Empty(t, r.clocksOf("shared"), "both forgotten")
}

package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// LostResult counts the sessions one client lost behind one gateway in a
// fixed period.
type LostResult struct {
	Gateway string
	Client  Client
	Period  time.Duration
	// Lost counts sessions that ended by themselves: for mcpsup the sessions
	// it replaced (SessionsOpened - 1), for go-sdk every return of
	// ClientSession.Wait (the host then connects again).
	Lost int
	// GETs counts the push stream requests the gateway saw: standalone
	// GETs (2025 era), subscriptions/listen POSTs (2026-07-28).
	GETs int
	// Era is the server's protocol era: "2025-11-25" (stateful) or
	// "2026-07-28" (sessionless, its push channel subscriptions/listen).
	Era string
	// PushAtEnd tells whether a tool the server added at the end of the
	// period reached the client within LostPushWait: through list_changed
	// on the push stream, or (mcpsup with the stream turned off) its
	// catalog poll, LostPollInterval.
	PushAtEnd bool
	// StreamOff tells whether mcpsup turned the stream off (StreamAuto's
	// GET-hostile rule fired).
	StreamOff bool
	// CallOK tells whether a tools/call at the end of the period succeeded.
	CallOK bool
	Err    error
}

// lostGateway is one gateway of figure 3, in front of a server of mode.
type lostGateway struct {
	name string
	rule mcptest.Rule
	mode mcptest.Mode
}

// era names the protocol era of g's server.
func (g lostGateway) era() string {
	if g.mode == mcptest.Sessionless2026 {
		return "2026-07-28"
	}
	return "2025-11-25"
}

// LostPushWait is how long figure 3 waits for a tool added at the end of
// the period to reach the client; LostPollInterval is mcpsup's catalog poll
// there (the stream turned off polls).
const (
	LostPushWait     = 3 * time.Second
	LostPollInterval = time.Second
)

// IdleCutSilence is how long the idle-cutting proxy of figure 3 lets a
// stream stay silent. It is longer than LostSpan, so mcpsup's rule sees the
// streams as living (a healthy server behind a proxy), not failing at once.
const IdleCutSilence = 500 * time.Millisecond

// LostSpan shortens mcpsup's hostility span and stream re-dial backoff so
// the figure fits in seconds; the defaults (2s span, 1s-30s backoff) reach
// the same decisions more slowly.
const LostSpan = 200 * time.Millisecond

var lostGateways = []lostGateway{
	{"GET-hostile (200 SSE, closed at once)", mcptest.GETHostile(), mcptest.Stateful2025},
	{fmt.Sprintf("idle-cutting proxy (cut after %v silence)", IdleCutSilence), mcptest.IdleCut(IdleCutSilence), mcptest.Stateful2025},
	{"listen-hostile (listen answered 200 SSE, closed at once)", mcptest.ListenHostile(), mcptest.Sessionless2026},
	{fmt.Sprintf("listen idle-cutting proxy (cut after %v silence)", IdleCutSilence), mcptest.ListenIdleCut(IdleCutSilence), mcptest.Sessionless2026},
}

// lostConfig is the supervisor config of figure 3.
func lostConfig() supervisor.Config {
	return supervisor.Config{
		Name: "lost",
		Stream: supervisor.StreamConfig{
			Policy:      supervisor.StreamAuto,
			HostileRule: supervisor.HostileRule{Threshold: 3},
			Keeper:      supervisor.StreamKeeper{Span: LostSpan, InitialBackoff: LostSpan / 4, MaxBackoff: 2 * LostSpan},
		},
		Limits: supervisor.LimitsConfig{CatalogPollInterval: LostPollInterval},
	}
}

// SessionsLost runs figure 3: mcpsup (StreamAuto) and bare go-sdk behind
// each gateway for period, all at once.
func SessionsLost(ctx context.Context, period time.Duration) []LostResult {
	var runs []func() LostResult
	for _, g := range lostGateways {
		runs = append(runs,
			func() LostResult { return lostSupervised(ctx, g, period) },
			func() LostResult { return lostBare(ctx, g, period) })
	}
	out := make([]LostResult, len(runs))
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Go(func() { out[i] = run() })
	}
	wg.Wait()
	return out
}

func lostServer(g lostGateway) (*mcptest.Server, error) {
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1, Mode: g.mode})
	if err != nil {
		return nil, err
	}
	srv.Gateway().Add(g.rule)
	return srv, nil
}

func lostSupervised(ctx context.Context, g lostGateway, period time.Duration) LostResult {
	res := LostResult{Gateway: g.name, Client: Supervised, Period: period, Era: g.era()}
	srv, err := lostServer(g)
	if err != nil {
		res.Err = err
		return res
	}
	defer srv.Close()
	rec := &events.Recorder{}
	cfg := lostConfig()
	cfg.Observe.Events = rec
	start, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	sup, err := startSupervisor(start, srv.URL(), srv.HTTPClient(), cfg)
	if err != nil {
		res.Err = err
		return res
	}
	defer sup.Close()
	select {
	case <-time.After(period):
	case <-ctx.Done():
		res.Err = ctx.Err()
		return res
	}
	call, cancelCall := context.WithTimeout(ctx, 10*time.Second)
	defer cancelCall()
	_, err = sup.CallTool(call, recordCall("end"))
	res.CallOK = err == nil
	res.Lost = sup.SessionsOpened() - 1
	res.GETs = pushRequests(srv)
	res.PushAtEnd = pushedWithin(ctx, srv, func() bool { return slices.Contains(sup.Catalog().ToolNames(), lateTool) })
	for _, e := range rec.Events() {
		if e.Kind == events.KindStreamDisabled {
			res.StreamOff = true
		}
	}
	return res
}

func lostBare(ctx context.Context, g lostGateway, period time.Duration) LostResult {
	res := LostResult{Gateway: g.name, Client: BareSDK, Period: period, Era: g.era()}
	srv, err := lostServer(g)
	if err != nil {
		res.Err = err
		return res
	}
	defer srv.Close()
	deadline := time.Now().Add(period)
	for {
		dial, cancel := context.WithTimeout(ctx, 10*time.Second)
		var pushed atomic.Bool
		s, err := dialLost(dial, srv, g, &pushed)
		cancel()
		if err != nil {
			res.Err = err
			return res
		}
		died := make(chan struct{})
		go func() { _ = s.Wait(); close(died) }()
		left := max(time.Until(deadline), 0)
		select {
		case <-died:
			res.Lost++
			if time.Now().Before(deadline) {
				continue // the host connects again
			}
		case <-time.After(left):
		case <-ctx.Done():
			_ = s.Close()
			res.Err = ctx.Err()
			return res
		}
		call, cancelCall := context.WithTimeout(ctx, 10*time.Second)
		_, err = s.CallTool(call, recordCall("end"))
		cancelCall()
		res.CallOK = err == nil
		res.GETs = pushRequests(srv)
		res.PushAtEnd = pushedWithin(ctx, srv, pushed.Load)
		_ = s.Close()
		<-died
		return res
	}
}

// lateTool is the tool figure 3's server adds at the end of the period.
const lateTool = "late-tool"

// pushRequests counts the push stream requests srv's gateway saw.
func pushRequests(srv *mcptest.Server) int {
	return srv.Log().CountVerb(http.MethodGet) + srv.Log().Count(mcptest.ListenMethod)
}

// pushedWithin adds lateTool to srv and reports whether seen turns true
// within LostPushWait.
func pushedWithin(ctx context.Context, srv *mcptest.Server, seen func() bool) bool {
	srv.AddTool(lateTool)
	ctx, cancel := context.WithTimeout(ctx, LostPushWait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !seen() {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// dialLost opens the bare go-sdk session of figure 3: the baselines'
// pinned 2025 version on a 2025-era server; on a 2026-07-28 server go-sdk's
// own default (server/discover), with a tools list_changed handler, so
// that go-sdk opens subscriptions/listen; pushed turns true on a
// list_changed.
func dialLost(ctx context.Context, srv *mcptest.Server, g lostGateway, pushed *atomic.Bool) (*mcp.ClientSession, error) {
	opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { pushed.Store(true) }}
	version := pinnedVersion
	if g.mode == mcptest.Sessionless2026 {
		version = ""
	}
	c := mcp.NewClient(implementation, opts)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient()},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
}

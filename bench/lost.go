package bench

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

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
	// GETs counts the standalone stream requests the gateway saw.
	GETs int
	// StreamOff tells whether mcpsup turned the stream off (StreamAuto's
	// GET-hostile rule fired).
	StreamOff bool
	// CallOK tells whether a tools/call at the end of the period succeeded.
	CallOK bool
	Err    error
}

// lostGateway is one gateway of figure 3.
type lostGateway struct {
	name string
	rule mcptest.Rule
}

// IdleCutSilence is how long the idle-cutting proxy of figure 3 lets a
// stream stay silent. It is longer than LostSpan, so mcpsup's rule sees the
// streams as living (a healthy server behind a proxy), not failing at once.
const IdleCutSilence = 500 * time.Millisecond

// LostSpan shortens mcpsup's hostility span and stream re-dial backoff so
// the figure fits in seconds; the defaults (2s span, 1s-30s backoff) reach
// the same decisions more slowly.
const LostSpan = 200 * time.Millisecond

var lostGateways = []lostGateway{
	{"GET-hostile (200 SSE, closed at once)", mcptest.GETHostile()},
	{fmt.Sprintf("idle-cutting proxy (cut after %v silence)", IdleCutSilence), mcptest.IdleCut(IdleCutSilence)},
}

// lostConfig is the supervisor config of figure 3.
func lostConfig() supervisor.Config {
	return supervisor.Config{
		Name:         "lost",
		Stream:       supervisor.StreamAuto,
		HostileRule:  supervisor.HostileRule{Threshold: 3},
		StreamKeeper: supervisor.StreamKeeper{Span: LostSpan, InitialBackoff: LostSpan / 4, MaxBackoff: 2 * LostSpan},
	}
}

// SessionsLost runs figure 3: mcpsup (StreamAuto) and bare go-sdk behind
// each gateway for period, all four at once.
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
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	if err != nil {
		return nil, err
	}
	srv.Gateway().Add(g.rule)
	return srv, nil
}

func lostSupervised(ctx context.Context, g lostGateway, period time.Duration) LostResult {
	res := LostResult{Gateway: g.name, Client: Supervised, Period: period}
	srv, err := lostServer(g)
	if err != nil {
		res.Err = err
		return res
	}
	defer srv.Close()
	rec := &events.Recorder{}
	cfg := lostConfig()
	cfg.Events = rec
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
	res.GETs = srv.Log().CountVerb(http.MethodGet)
	for _, e := range rec.Events() {
		if e.Kind == events.KindStreamDisabled {
			res.StreamOff = true
		}
	}
	return res
}

func lostBare(ctx context.Context, g lostGateway, period time.Duration) LostResult {
	res := LostResult{Gateway: g.name, Client: BareSDK, Period: period}
	srv, err := lostServer(g)
	if err != nil {
		res.Err = err
		return res
	}
	defer srv.Close()
	deadline := time.Now().Add(period)
	for {
		dial, cancel := context.WithTimeout(ctx, 10*time.Second)
		s, err := dialSDK(dial, srv.URL(), srv.HTTPClient(), false)
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
		res.GETs = srv.Log().CountVerb(http.MethodGet)
		_ = s.Close()
		<-died
		return res
	}
}

package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// ReadyResult is the time to ready of one way of getting a usable
// connection, with a fixed gateway latency on every request.
type ReadyResult struct {
	Scenario string
	Latency  time.Duration // added by the gateway to every request
	Runs     int
	// Median, Min and Max of the time from start to a usable connection.
	Median, Min, Max time.Duration
	// Requests is the number of requests the gateway saw before ready, in
	// the median run.
	Requests int
	Err      error
}

// RoundTrips is Median in units of Latency.
func (r ReadyResult) RoundTrips() float64 { return float64(r.Median) / float64(r.Latency) }

// readyOptions is the server of figure 2: every list kind present, so a
// blind resume has four real probes.
var readyOptions = mcptest.Options{Tools: 3, Resources: 2, Prompts: 2, Templates: 1}

// TimeToReady runs figure 2 with latency on every request and runs
// repetitions of each scenario.
func TimeToReady(ctx context.Context, latency time.Duration, runs int) []ReadyResult {
	return []ReadyResult{
		readyScenario(ctx, "mcpsup blind resume (probes)", latency, runs, resumeRun(false, false, supervisor.StreamAuto)),
		readyScenario(ctx, "mcpsup blind resume, Stream off", latency, runs, resumeRun(false, false, supervisor.StreamOff)),
		readyScenario(ctx, "mcpsup known resume (persisted capabilities)", latency, runs, resumeRun(true, false, supervisor.StreamAuto)),
		readyScenario(ctx, "mcpsup stale recovery (blind resume, server restarted)", latency, runs, resumeRun(false, true, supervisor.StreamAuto)),
		readyScenario(ctx, "mcpsup stale recovery, Stream off", latency, runs, resumeRun(false, true, supervisor.StreamOff)),
		readyScenario(ctx, "mcpsup fresh connect (default Era: auto)", latency, runs, freshSupervisor),
		readyScenario(ctx, "bare go-sdk fresh connect + tools/list (version pinned)", latency, runs, freshSDK),
		readyScenarioOn(ctx, mcptest.Sessionless2026, "2026-07-28: mcpsup fresh connect (server/discover)", latency, runs, freshSupervisor),
		readyScenarioOn(ctx, mcptest.Sessionless2026, "2026-07-28: mcpsup known resume (persisted discovery)", latency, runs, resumeRun(true, false, supervisor.StreamAuto)),
		readyScenarioOn(ctx, mcptest.Sessionless2026, "2026-07-28: bare go-sdk fresh connect + tools/list (server/discover)", latency, runs, freshSDK2026),
	}
}

// readyRun measures one run against srv, whose gateway already delays every
// request; it returns the time to ready.
type readyRun func(ctx context.Context, srv *mcptest.Server, persisted *supervisor.ResumeState) (time.Duration, error)

func readyScenario(ctx context.Context, name string, latency time.Duration, runs int, run readyRun) ReadyResult {
	return readyScenarioOn(ctx, mcptest.Stateful2025, name, latency, runs, run)
}

// readyScenarioOn is readyScenario on a server of mode.
func readyScenarioOn(ctx context.Context, mode mcptest.Mode, name string, latency time.Duration, runs int, run readyRun) ReadyResult {
	res := ReadyResult{Scenario: name, Latency: latency, Runs: runs}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	opts := readyOptions
	opts.Mode = mode
	srv, err := mcptest.NewServer(opts)
	if err != nil {
		res.Err = err
		return res
	}
	defer srv.Close()
	persisted, err := persistSession(ctx, srv, mode == mcptest.Sessionless2026)
	if err != nil {
		res.Err = err
		return res
	}
	srv.Gateway().Add(mcptest.Rule{Name: "latency", Action: mcptest.Delay(latency)})
	type sample struct {
		d    time.Duration
		reqs int
	}
	var samples []sample
	for range runs {
		srv.Log().Reset()
		d, err := run(ctx, srv, persisted)
		if err != nil {
			res.Err = err
			return res
		}
		samples = append(samples, sample{d, len(srv.Log().Entries())})
	}
	slices.SortFunc(samples, func(a, b sample) int { return int(a.d - b.d) })
	mid := samples[len(samples)/2]
	res.Median, res.Requests = mid.d, mid.reqs
	res.Min, res.Max = samples[0].d, samples[len(samples)-1].d
	return res
}

// persistSession opens a session with a supervisor and detaches, keeping
// the server-side session, and returns what a host would persist; a
// sessionless server's state has no session id, only the discovery result.
func persistSession(ctx context.Context, srv *mcptest.Server, sessionless bool) (*supervisor.ResumeState, error) {
	sup, err := startSupervisor(ctx, srv.URL(), srv.HTTPClient(), supervisor.Config{Name: "persist"})
	if err != nil {
		return nil, err
	}
	rs := sup.ResumeState()
	_ = sup.Detach()
	if rs == nil || (rs.SessionID == "") != sessionless {
		return nil, fmt.Errorf("no resume state after a session")
	}
	return rs, nil
}

// resumeRun resumes the persisted session: known keeps the persisted
// capabilities, stale restarts the server first so the id is unknown.
func resumeRun(known, stale bool, stream supervisor.StreamPolicy) readyRun {
	return func(ctx context.Context, srv *mcptest.Server, persisted *supervisor.ResumeState) (time.Duration, error) {
		rs := *persisted
		if !known {
			rs.InitializeResult = nil
		}
		if stale {
			if err := srv.Restart(); err != nil {
				return 0, err
			}
			srv.Log().Reset()
		}
		sup, d, err := startTimed(ctx, srv.URL(), srv.HTTPClient(), supervisor.Config{Name: "resume", Resume: &rs, Stream: supervisor.StreamConfig{Policy: stream}})
		if err != nil {
			return d, err
		}
		if stale == (sup.Generation() == 1) {
			err = fmt.Errorf("resume took %d sessions, stale=%v", sup.Generation(), stale)
		}
		if stale {
			_ = sup.Close()
		} else {
			_ = sup.Detach() // the persisted session lives on for the next run
		}
		return d, err
	}
}

func freshSupervisor(ctx context.Context, srv *mcptest.Server, _ *supervisor.ResumeState) (time.Duration, error) {
	sup, d, err := startTimed(ctx, srv.URL(), srv.HTTPClient(), supervisor.Config{Name: "fresh"})
	if err != nil {
		return d, err
	}
	_ = sup.Close()
	return d, nil
}

func freshSDK(ctx context.Context, srv *mcptest.Server, _ *supervisor.ResumeState) (time.Duration, error) {
	start := time.Now()
	sess, err := dialAndList(ctx, srv.URL(), srv.HTTPClient())
	d := time.Since(start)
	if sess == nil {
		return 0, err
	}
	_ = sess.Close()
	return d, err
}

// freshSDK2026 is freshSDK with go-sdk's default handshake on a 2026-07-28
// server: server/discover, then tools/list.
func freshSDK2026(ctx context.Context, srv *mcptest.Server, _ *supervisor.ResumeState) (time.Duration, error) {
	start := time.Now()
	c := mcp.NewClient(implementation, nil)
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient()}, nil)
	if err != nil {
		return 0, err
	}
	_, err = sess.ListTools(ctx, nil)
	d := time.Since(start)
	_ = sess.Close()
	return d, err
}

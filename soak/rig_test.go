package soak_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// startMode is how a supervisor starts.
type startMode int

const (
	fresh      startMode = iota // a new session
	blind                       // a persisted session, capabilities unknown (probing)
	blindStale                  // the same, the server no longer knows it (stale recovery)
	known                       // a persisted session with its initialize result
	knownStale                  // the same, the server no longer knows it
)

var startNames = []string{"fresh", "blind", "blind-stale", "known", "known-stale"}

func (m startMode) String() string { return startNames[m] }

func (m startMode) resumed() bool { return m != fresh }

// modeOf spreads the start modes over the supervisors.
func modeOf(i int) startMode {
	switch i % 4 {
	case 1:
		return blind
	case 2:
		return blindStale
	case 3:
		if i%8 == 7 {
			return knownStale
		}
		return known
	}
	return fresh
}

// sessionlessOf tells which servers are 2026-07-28 (sessionless,
// server/discover, subscriptions/listen): a known resume (StreamAuto), a
// fresh start (StreamOn) and a blind resume (StreamOff, keepalive by
// server/discover) of every eight. A sessionless server has no session to
// forget, and a 2026-07-28 resume needs the persisted discovery result, so
// those start fresh or known.
func sessionlessOf(i int) bool { return i%8 == 3 || i%8 == 4 || i%8 == 5 }

// sessionlessMode is m for a sessionless server: blind becomes fresh, a
// stale known resume known.
func sessionlessMode(m startMode) startMode {
	switch m {
	case blind, blindStale:
		return fresh
	case knownStale:
		return known
	}
	return m
}

// streamOf spreads the standalone stream policies over the supervisors.
func streamOf(i int) supervisor.StreamPolicy {
	return []supervisor.StreamPolicy{supervisor.StreamAuto, supervisor.StreamOn, supervisor.StreamOff}[i%3]
}

// Timeouts of the supervisors; maxLatency stays far below each.
const (
	discoveryTimeout = 5 * time.Second
	probeTimeout     = 2 * time.Second
	keepAlive        = 2 * time.Second // ping timeout 1s (go-sdk: half the interval)
	setupTimeout     = 10 * time.Second
)

// rig is one supervisor, its server and the faults on it.
type rig struct {
	name   string
	mode   startMode
	stream supervisor.StreamPolicy
	srv    *mcptest.Server
	sup    *supervisor.Supervisor
	rec    *events.Recorder
	chaos  *chaos
	// setupFaults are session-ending faults injected before Start (the
	// expiry or restart that makes a persisted session stale).
	setupFaults int
	calls       *ledger
}

// config is the supervisor configuration of the soak: fast retries with a
// budget no soak exhausts, and stream timings short enough that stream
// faults play out within a rule's lifetime.
func (r *rig) config() supervisor.Config {
	cfg := supervisor.Config{
		Endpoint: r.srv.URL(),
		Name:     r.name,
		HTTP:     supervisor.HTTPConfig{HTTPClient: r.srv.HTTPClient()},
		Stream: supervisor.StreamConfig{
			Policy:        r.stream,
			HostileMemory: 3 * time.Second,
			HostileRule:   supervisor.HostileRule{Threshold: 3},
			Keeper:        supervisor.StreamKeeper{Span: 250 * time.Millisecond, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 300 * time.Millisecond},
		},
		Recovery: supervisor.RecoveryConfig{
			Backoff: supervisor.Backoff{
				InitialInterval: 10 * time.Millisecond,
				MaxInterval:     200 * time.Millisecond,
				MaxAttempts:     100_000,
				MaxElapsed:      10 * time.Minute,
			},
			DiscoveryTimeout: discoveryTimeout,
			ProbeTimeout:     probeTimeout,
			MaxSessions:      1_000_000,
			ChurnWindow:      time.Minute,
		},
	}
	if r.stream == supervisor.StreamOff {
		cfg.Recovery.KeepAlive = keepAlive
	}
	return cfg
}

// newRig starts server i and builds (without starting) its supervisor; a
// resumed one gets its persisted state from a supervisor that opened a
// session and detached.
func newRig(t *testing.T, i int, seed uint64) *rig {
	t.Helper()
	era := mcptest.Stateful2025
	if sessionlessOf(i) {
		era = mcptest.Sessionless2026
	}
	srv, err := mcptest.NewServer(mcptest.Options{Mode: era, Tools: 1 + i%3, Name: fmt.Sprintf("soak-%d", i), MaxHold: 5 * time.Second})
	if err != nil {
		t.Fatalf("seed %d: server %d: %v", seed, i, err)
	}
	t.Cleanup(srv.Close)
	mode := modeOf(i)
	if sessionlessOf(i) {
		mode = sessionlessMode(mode)
	}
	r := &rig{
		name:   fmt.Sprintf("sup-%d", i),
		mode:   mode,
		stream: streamOf(i),
		srv:    srv,
		rec:    &events.Recorder{},
		chaos:  newChaos(srv, rand.New(rand.NewPCG(seed, uint64(i)))),
		calls:  newLedger(),
	}
	cfg := r.config()
	if r.mode.resumed() {
		cfg.Resume = r.persisted(t, seed)
	}
	cfg.Observe.Events = r.rec
	cfg.Observe.CallHandler = r.calls // records the re-issued calls
	sup, err := supervisor.New(cfg)
	if err != nil {
		t.Fatalf("seed %d: %s: New: %v", seed, r.name, err)
	}
	r.sup = sup
	return r
}

// persisted opens a session with a first supervisor, detaches it and
// returns its resume state, made blind and stale as the mode says.
func (r *rig) persisted(t *testing.T, seed uint64) *supervisor.ResumeState {
	t.Helper()
	first, err := supervisor.New(r.config())
	if err != nil {
		t.Fatalf("seed %d: %s: first supervisor: %v", seed, r.name, err)
	}
	first.Start()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	err = first.WaitForState(ctx, supervisor.Ready)
	_ = first.Detach()
	if err != nil {
		t.Fatalf("seed %d: %s: first supervisor not ready: %v (state %s)", seed, r.name, err, first.State())
	}
	rs := first.ResumeState()
	if rs == nil || (rs.SessionID == "") != (r.srv.Mode() == mcptest.Sessionless2026) {
		t.Fatalf("seed %d: %s: no resume state after Detach: %+v", seed, r.name, rs)
	}
	if r.mode == blind || r.mode == blindStale {
		rs.InitializeResult = nil
	}
	switch r.mode {
	case blindStale:
		if !r.srv.ExpireSession(rs.SessionID) {
			t.Fatalf("seed %d: %s: the detached session is unknown to the server", seed, r.name)
		}
		r.setupFaults = 1
	case knownStale:
		if err := r.srv.Restart(); err != nil {
			t.Fatalf("seed %d: %s: restart: %v", seed, r.name, err)
		}
		r.setupFaults = 1
	}
	return rs
}

// staleRecoveries counts the transitions into stale-recovering, once the
// events announcing the supervisor's state reached the recorder (events are
// delivered on their own goroutine).
func (r *rig) staleRecoveries() int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evs, _ := r.rec.WaitFor(ctx, func(evs []events.Event) bool {
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i].Kind == events.KindTransition {
				return evs[i].To == r.sup.State()
			}
		}
		return false
	})
	n := 0
	for _, e := range evs {
		if e.Kind == events.KindTransition && e.To == supervisor.StaleRecovering && e.From != e.To {
			n++
		}
	}
	return n
}

package hub

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/supervisor"
)

// Health is one server's condition as a value.
type Health struct {
	Server string
	// State is the supervisor's state.
	State supervisor.State
	// Since is when it entered State (the event's time, on the supervisor's
	// clock).
	Since time.Time
	// Reason is why a terminal failed state is terminal ("unauthorized",
	// "canceled", "budget-spent", "churn"), else "".
	Reason supervisor.Reason
	// Verdict is the last failure of the server's (a transition's or a
	// failed call's); the zero verdict when none. A verdict of class
	// canceled is never kept: the caller's cancellation or deadline is the
	// caller's, not the server's, and does not hide the server's last
	// failure (see serverFailure).
	Verdict classify.Verdict
	// Generation is the session generation; SessionsOpened the sessions
	// that opened.
	Generation     uint64
	SessionsOpened int
	// Tools, Prompts and Resources count the server's items in the merged
	// catalog.
	Tools, Prompts, Resources int
	// Lease is whether this replica holds the server's lease (LeaseNone
	// when the Store grants no leases). A standby server's State is Idle:
	// its supervisor starts when the lease is acquired.
	Lease LeaseState
}

// serverFailure reports whether v is a failure of the server's, the one
// Health keeps: a failure, and not class canceled (the caller's context
// ended: its cancellation or its deadline, classify.Canceled). The one rule
// of Health.Verdict, for the transitions, the call-failed events and the
// calls' errors alike.
func serverFailure(v classify.Verdict) bool {
	return v.Class != classify.None && v.Class != classify.Canceled
}

// noteFailure keeps v as the server's last failure (Health.Verdict) when
// it is one of the server's (serverFailure). Its texts come masked by the
// supervisor, which knows the server's header and env values
// (supervisor.Config.Secrets, Command.Env). The one writer of
// entry.verdict; safe for concurrent use.
func (h *Hub) noteFailure(e *entry, v classify.Verdict) {
	if !serverFailure(v) {
		return
	}
	e.mu.Lock()
	e.verdict = v
	e.mu.Unlock()
}

// Ready reports whether the server is ready.
func (hl Health) Ready() bool { return hl.State == supervisor.Ready }

// Retrying reports a failed server that is tried again on its backoff: no
// terminal Reason. A failed server with a Reason waits for the host
// (unauthorized, canceled, budget-spent) or for its churn to cool.
func (hl Health) Retrying() bool {
	return hl.State == supervisor.Failed && hl.Reason == supervisor.ReasonNone
}

// Health returns every server's health, sorted by server name.
func (h *Hub) Health() []Health {
	h.mu.Lock()
	all := slices.Collect(maps.Values(h.servers))
	h.mu.Unlock()
	out := make([]Health, 0, len(all))
	for _, e := range all {
		out = append(out, h.health(e))
	}
	return sortHealth(out)
}

func (h *Hub) health(e *entry) Health {
	sup := e.current()
	reason, _ := sup.Failure()
	e.mu.Lock()
	hl := Health{Server: e.name, Since: e.since, Verdict: e.verdict, Lease: e.leaseState}
	e.mu.Unlock()
	hl.State = sup.State()
	hl.Reason = reason
	hl.Generation = sup.Generation()
	hl.SessionsOpened = sup.SessionsOpened()
	h.catMu.Lock()
	hl.Tools, hl.Prompts, hl.Resources = h.tools.count(e.name), h.prompts.count(e.name), h.resources.count(e.name)
	h.catMu.Unlock()
	return hl
}

func sortHealth(hs []Health) []Health {
	slices.SortFunc(hs, func(a, b Health) int { return strings.Compare(a.Server, b.Server) })
	return hs
}

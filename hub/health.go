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
	// Verdict is the server's last failure (a transition's or a failed
	// call's), never of class canceled (the caller's, not the server's);
	// the zero verdict when none.
	Verdict classify.Verdict
	// Generation is the session generation; SessionsOpened the sessions
	// that opened.
	Generation     uint64
	SessionsOpened int
	// Tools, Prompts and Resources count the server's items in the merged
	// catalog.
	Tools, Prompts, Resources int
	// Lease is whether this replica holds the server's lease (LeaseNone
	// without a Leaser); a standby server's State is Idle.
	Lease LeaseState
}

// noteFailure keeps v as the server's last failure (Health.Verdict) when
// it is a failure and not the caller's (class canceled): the one writer of
// entry.verdict, for transitions, call-failed events and calls' errors.
func (h *Hub) noteFailure(e *entry, v classify.Verdict) {
	if v.Class == classify.None || v.Class == classify.Canceled {
		return
	}
	e.mu.Lock()
	e.verdict = v
	e.mu.Unlock()
}

// Ready reports whether the server is ready.
func (hl Health) Ready() bool { return hl.State == supervisor.Ready }

// Retrying reports a failed server tried again on its backoff (no
// terminal Reason).
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

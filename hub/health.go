package hub

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
)

// WaitMode says what WaitReady waits for.
type WaitMode uint8

const (
	// All waits until every server of the hub is ready; it gives up
	// (NotReadyError) as soon as one server failed for good or is ready
	// with its current catalog refused (Health.CatalogRefused).
	All WaitMode = iota
	// Any waits until at least one server is ready.
	Any
	// Settled waits until every server is ready (its catalog merged or
	// refused), failed for good or standing by for another replica's
	// lease: Health says which serve.
	Settled
)

// WaitReady blocks until every server (All) or one (Any) is ready and its
// catalog merged, or every server settled (Settled). It returns a
// *NotReadyError (ErrNotReady) when ctx ends first or the wait can no
// longer succeed (a terminal failed state, a refused catalog: the error
// wraps its *CatalogRefusedError; Any: no servers); ErrClosed once the hub
// is closed. A server's refused catalog stands until the server lists one
// within the bounds (its list_changed), which clears it.
func (h *Hub) WaitReady(ctx context.Context, mode WaitMode) error {
	for {
		h.mu.Lock()
		ch, closed, all := h.changed, h.life.Err() != nil, slices.Collect(maps.Values(h.servers))
		h.mu.Unlock()
		if closed {
			return ErrClosed
		}
		ready, hopeless := 0, 0
		var waiting []Health // not ready; for Settled, not settled
		for _, e := range all {
			hl, current := h.health(e)
			switch {
			case current && hl.CatalogRefused == nil:
				ready++
			case current, hl.State == supervisor.Closed || hl.State == supervisor.Failed && !hl.Retrying():
				hopeless++
				if mode != Settled {
					waiting = append(waiting, hl)
				}
			case mode != Settled || hl.Lease != LeaseStandby:
				waiting = append(waiting, hl)
			}
		}
		done, failed := ready == len(all), hopeless > 0
		switch mode {
		case Any:
			done, failed = ready > 0, hopeless == len(all)
		case Settled:
			done, failed = len(waiting) == 0, false
		}
		if done {
			return nil
		}
		var err error
		if !failed {
			select { // every transition notifies
			case <-ch:
				continue
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		return &NotReadyError{Mode: mode, Servers: sortHealth(waiting), Err: err, redact: &h.redact}
	}
}

// NotReadyError is WaitReady's failure: the servers not ready (for
// Settled, not settled). Its text, redacted as the hub's events, names at
// most 8 as "name (state, reason, lease, last failure)".
type NotReadyError struct {
	Mode    WaitMode
	Servers []Health
	Err     error // the context's error, when it ended the wait

	redact *events.Redactor
}

func (e *NotReadyError) Error() string {
	s := strings.Join(append([]string{"hub: not ready:"}, describeServers(e.Servers)...), " ")
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return e.redact.Text(s)
}

const maxListedServers = 8

// describeServers names at most maxListedServers of hs, then how many more.
func describeServers(hs []Health) []string {
	var out []string
	for i, hl := range hs {
		if i == maxListedServers {
			out = append(out, fmt.Sprintf("and %d more", len(hs)-i))
			break
		}
		s := fmt.Sprintf("%s (%s", hl.Server, hl.State)
		if hl.Reason != "" {
			s += ", " + string(hl.Reason)
		}
		if hl.Lease == LeaseStandby {
			s += ", lease standby: another replica serves it"
		}
		if hl.Verdict.Class != classify.None {
			s += ", last failure " + hl.Verdict.Described()
		}
		if r := hl.CatalogRefused; r != nil {
			s += fmt.Sprintf(", catalog refused: %d %s over %d", r.Count, r.Op, r.Bound)
		}
		out = append(out, s+")")
	}
	return out
}

// Unwrap gives ErrNotReady, the context's error when it ended the wait,
// and each listed server's *CatalogRefusedError.
func (e *NotReadyError) Unwrap() []error {
	errs := []error{ErrNotReady}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	for _, hl := range e.Servers {
		if hl.CatalogRefused != nil {
			errs = append(errs, hl.CatalogRefused)
		}
	}
	return errs
}

// Health is one server's condition as a value.
type Health struct {
	Server string
	State  supervisor.State
	Since  time.Time // when it entered State, on the supervisor's clock
	// Reason is why a terminal failed state is terminal ("unauthorized",
	// "canceled", "budget-spent", "churn"), else "".
	Reason supervisor.Reason
	// Verdict is the server's last failure (a transition's or a call's),
	// never of class canceled (the caller's); zero when none.
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
	// CatalogRefused is why the server's last catalog was not merged (over
	// Config.MaxCatalogItems or MaxCatalogBytes; its items merged before
	// stay); nil once a catalog within both bounds is merged.
	CatalogRefused *CatalogRefusedError
}

// noteFailure keeps v as the server's last failure (Health.Verdict) unless
// it is none or the caller's (class canceled).
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

// Retrying reports a failed server tried again on its backoff.
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
		hl, _ := h.health(e)
		out = append(out, hl)
	}
	return sortHealth(out)
}

// health is the server's Health; current: it is ready and this session's
// catalog was merged, or refused (CatalogRefused).
func (h *Hub) health(e *entry) (hl Health, current bool) {
	sup := e.current()
	reason, _ := sup.Failure()
	hl = Health{Server: e.name, State: sup.State(), Reason: reason, Generation: sup.Generation(), SessionsOpened: sup.SessionsOpened()}
	e.mu.Lock()
	if e.sup != sup { // a term began or ended meanwhile: sup may be closed already
		e.mu.Unlock()
		return h.health(e)
	}
	hl.Since, hl.Verdict, hl.CatalogRefused = e.since, e.verdict, e.refused
	switch {
	case e.lease != nil:
		hl.Lease = LeaseHeld
	case e.leaseDone != nil:
		hl.Lease = LeaseStandby
	}
	current = hl.Ready() && e.merged == hl.Generation
	e.mu.Unlock()
	h.catMu.Lock()
	hl.Tools, hl.Prompts, hl.Resources = len(h.tools.byServer[e.name]), len(h.prompts.byServer[e.name]), len(h.resources.byServer[e.name])
	h.catMu.Unlock()
	return hl, current
}

func sortHealth(hs []Health) []Health {
	slices.SortFunc(hs, func(a, b Health) int { return strings.Compare(a.Server, b.Server) })
	return hs
}

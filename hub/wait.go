package hub

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
)

// WaitMode says what WaitReady waits for.
type WaitMode uint8

const (
	// All waits until every server of the hub is ready; it gives up
	// (NotReadyError) as soon as one server failed for good.
	All WaitMode = iota
	// Any waits until at least one server is ready.
	Any
	// Settled waits until every server is ready, failed for good (a
	// terminal Reason, or closed) or standing by for another replica's
	// lease, and returns nil then: Health says which serve.
	Settled
)

// WaitReady blocks until every server (All) or one (Any) is ready and its
// catalog merged (its items route), or every server settled (Settled). It
// returns a *NotReadyError wrapping ErrNotReady, naming the servers not
// ready (not settled) and their states, when ctx ends first or the wait can
// no longer succeed (All, Any: a terminal failed state; Any: no servers);
// ErrClosed once the hub is closed. Every transition wakes it.
func (h *Hub) WaitReady(ctx context.Context, mode WaitMode) error {
	for {
		h.mu.Lock()
		ch, closed, all := h.changed, h.closed, slices.Collect(maps.Values(h.servers))
		h.mu.Unlock()
		if closed {
			return ErrClosed
		}
		ready, hopeless := 0, 0
		var waiting []*entry
		for _, e := range all {
			switch {
			case e.ready():
				ready++
				continue
			case e.terminal():
				hopeless++
				if mode == Settled {
					continue
				}
			case mode == Settled && e.standby():
				continue
			}
			waiting = append(waiting, e)
		}
		notReady := func(err error) error {
			hs := make([]Health, len(waiting))
			for i, e := range waiting {
				hs[i] = h.health(e)
			}
			return &NotReadyError{Mode: mode, Servers: sortHealth(hs), Err: err, redact: &h.redact}
		}
		var done, failed bool
		switch mode {
		case Any:
			done, failed = ready > 0, hopeless == len(all)
		case Settled:
			done = len(waiting) == 0
		default:
			done, failed = ready == len(all), hopeless > 0
		}
		if done {
			return nil
		}
		if failed {
			return notReady(nil)
		}
		select { // every transition notifies
		case <-ch:
		case <-ctx.Done():
			return notReady(ctx.Err())
		}
	}
}

// terminal reports whether the server failed for good: closed, or failed
// with a terminal Reason, which no retry leaves.
func (e *entry) terminal() bool {
	sup := e.current()
	switch sup.State() {
	case supervisor.Closed:
		return true
	case supervisor.Failed:
		reason, _ := sup.Failure()
		return reason != supervisor.ReasonNone
	}
	return false
}

// standby reports whether the server stands by for another's lease.
func (e *entry) standby() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leaseState == LeaseStandby
}

// NotReadyError is WaitReady's failure: the servers not ready (for
// Settled, not settled). Its text, redacted as the hub's events, names at
// most 8 as "name (state, reason, lease standby, last failure verdict)".
type NotReadyError struct {
	Mode    WaitMode
	Servers []Health
	Err     error // the context's error, when it ended the wait

	redact *events.Redactor
}

func (e *NotReadyError) Error() string {
	s := "hub: not ready:"
	for _, d := range describeServers(e.Servers) {
		s += " " + d
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return e.redact.Text(s)
}

// maxListedServers bounds the servers an error's text lists.
const maxListedServers = 8

// describeServers names each server of hs as NotReadyError does, at most
// maxListedServers, then how many more.
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
		out = append(out, s+")")
	}
	return out
}

func (e *NotReadyError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrNotReady, e.Err}
	}
	return []error{ErrNotReady}
}

package soak_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// Every call gets a deadline between these; the shortest is far above
// maxLatency.
const (
	minCallTimeout = 1 * time.Second
	maxCallTimeout = 2500 * time.Millisecond
	// callsPerEpoch bounds the calls a caller makes between two rule
	// changes, so that a fault answered at once does not spin.
	callsPerEpoch = 8
	// maxSamples bounds the error texts kept per failure class.
	maxSamples = 3
)

// call is one tool call's record.
type call struct {
	id       string
	deadline time.Time
	done     bool
	ok       bool
	notSent  bool // the error said the request never left
}

// ledger records every call of one supervisor.
type ledger struct {
	mu       sync.Mutex
	all      []*call
	ok       int
	failed   map[string]int      // by class (or the sentinel that refused it)
	samples  map[string][]string // up to maxSamples distinct error texts per class
	reissued map[string]bool     // the calls the supervisor re-issued, by id
}

func newLedger() *ledger {
	return &ledger{failed: map[string]int{}, samples: map[string][]string{}, reissued: map[string]bool{}}
}

// callIDKey carries a call's id in its context, for the ledger's
// CallHandler.
type callIDKey struct{}

func withCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// TagCall implements supervisor.CallHandler.
func (l *ledger) TagCall(ctx context.Context, _ supervisor.CallInfo) context.Context { return ctx }

// HandleCall implements supervisor.CallHandler: it records a re-issued call
// (a 2026-07-28 response stream that broke; the spec's MUST), which may run
// twice.
func (l *ledger) HandleCall(ctx context.Context, st supervisor.CallStage) {
	if _, ok := st.(*supervisor.CallReissued); !ok {
		return
	}
	if id, ok := ctx.Value(callIDKey{}).(string); ok {
		l.mu.Lock()
		l.reissued[id] = true
		l.mu.Unlock()
	}
}

// runs is how many times the call id may have run: once, twice when the
// supervisor re-issued it.
func (l *ledger) runs(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reissued[id] {
		return 2
	}
	return 1
}

func (l *ledger) begin(id string, deadline time.Time) *call {
	c := &call{id: id, deadline: deadline}
	l.mu.Lock()
	l.all = append(l.all, c)
	l.mu.Unlock()
	return c
}

func (l *ledger) end(c *call, class string, notSent bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.done, c.notSent = true, notSent
	if err == nil {
		c.ok = true
		l.ok++
		return
	}
	l.failed[class]++
	if text := err.Error(); len(l.samples[class]) < maxSamples && !slices.Contains(l.samples[class], text) {
		l.samples[class] = append(l.samples[class], text)
	}
}

// calls returns a snapshot of every call record.
func (l *ledger) calls() []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]call, len(l.all))
	for i, c := range l.all {
		out[i] = *c
	}
	return out
}

// classOf names how a call failed: the verdict's class, or the sentinel
// that refused it locally.
func classOf(err error) string {
	switch {
	case errors.Is(err, supervisor.ErrRateLimited):
		return "rate-limit-window"
	case errors.Is(err, supervisor.ErrWaitTimeout):
		return "wait-timeout"
	case errors.Is(err, supervisor.ErrNotReady):
		var se *supervisor.StateError
		if errors.As(err, &se) {
			return "not-ready-" + string(se.State)
		}
		return "not-ready"
	case errors.Is(err, supervisor.ErrUnknownTool):
		return "unknown-tool"
	case errors.Is(err, supervisor.ErrClosed):
		return "closed"
	}
	var ce *supervisor.CallError
	if errors.As(err, &ce) {
		return ce.Verdict.Class.String()
	}
	return "untyped"
}

// caller runs tool calls until ctx ends: up to callsPerEpoch calls, and
// after any failure, then waits for the next rule change.
func (r *rig) caller(ctx context.Context, ck *checker, set settings, c int, rng *rand.Rand) {
	n := 0
	for ctx.Err() == nil {
		epoch := r.chaos.changed()
		for range callsPerEpoch {
			if ctx.Err() != nil {
				return
			}
			ok := r.call(ck, set, fmt.Sprintf("%s/c%d/%d", r.name, c, n), rng)
			n++
			if !ok {
				break
			}
		}
		select {
		case <-epoch:
		case <-ctx.Done():
		}
	}
}

// call makes one tool call with its own deadline and checks what came
// back. It reports whether the call succeeded.
func (r *rig) call(ck *checker, set settings, id string, rng *rand.Rand) bool {
	deadline := time.Now().Add(between(rng, minCallTimeout, maxCallTimeout))
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	ctx = withCallID(ctx, id)
	rec := r.calls.begin(id, deadline)
	res, err := r.sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}})
	if late := time.Since(deadline); late > set.grace {
		ck.fail("call hung past its deadline", "%s: call %s returned %s after its deadline (grace %s), err %v", r.name, id, late, set.grace, err)
	}
	if err != nil {
		var ce *supervisor.CallError
		notSent := errors.As(err, &ce) && ce.Delivery == supervisor.NotSent
		if ce == nil {
			ck.fail("untyped call error", "%s: call %s: %T %v", r.name, id, err, err)
		}
		r.calls.end(rec, classOf(err), notSent, err)
		return false
	}
	r.calls.end(rec, "", false, nil)
	r.checkResult(ck, id, res)
	r.checkCatalog(ck, "after a call")
	return true
}

// checkResult checks a success: the recording tool's own answer, and the
// tool ran exactly once, or, re-issued, once or twice (the answer is the
// last run's).
func (r *rig) checkResult(ck *checker, id string, res *mcp.CallToolResult) {
	n := r.srv.Invocations(mcptest.RecordTool, id)
	limit := r.calls.runs(id)
	want := fmt.Sprintf("recorded %s #1", id)
	if limit > 1 {
		want = fmt.Sprintf("recorded %s #%d", id, n)
	}
	switch {
	case res == nil:
		ck.fail("empty success", "%s: call %s: nil result with nil error", r.name, id)
	case res.IsError:
		ck.fail("empty success", "%s: call %s: tool error %q", r.name, id, textOf(res))
	case textOf(res) != want:
		ck.fail("empty success", "%s: call %s: answer %q, want %q", r.name, id, textOf(res), want)
	}
	if n < 1 || n > limit {
		ck.fail("call replayed", "%s: call %s succeeded and the tool ran %d times", r.name, id, n)
	}
}

func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		} else {
			parts = append(parts, fmt.Sprintf("<%T>", c))
		}
	}
	return strings.Join(parts, "|")
}

// checkCatalog checks a ready supervisor's catalog against the server's
// tool list, when the catalog was listed on the current generation.
func (r *rig) checkCatalog(ck *checker, where string) {
	if r.sup.State() != supervisor.Ready {
		return
	}
	cat := r.sup.Catalog()
	gen := r.sup.Generation()
	if cat.Stale || cat.Generation != gen {
		return
	}
	got := slices.Sorted(slices.Values(cat.ToolNames()))
	if want := r.srv.ToolNames(); !slices.Equal(got, want) {
		ck.fail("catalog differs from the server", "%s (%s): generation %d: catalog %v, server %v", r.name, where, gen, got, want)
	}
}

// watch checks the catalog on every state the supervisor enters, until
// ctx ends.
func (r *rig) watch(ctx context.Context, ck *checker) {
	for {
		st := r.sup.State()
		if st == supervisor.Ready {
			r.checkCatalog(ck, "on entering ready")
		}
		if !r.sup.WaitForStateChange(ctx, st) {
			return
		}
	}
}

// checkInvocations checks, once every call has returned and every
// supervisor closed, that no call ran twice, every success ran once and no
// call reported as not sent ran at all.
func (r *rig) checkInvocations(ck *checker) {
	for _, c := range r.calls.calls() {
		n := r.srv.Invocations(mcptest.RecordTool, c.id)
		limit := r.calls.runs(c.id)
		switch {
		case n > limit:
			ck.fail("call replayed", "%s: call %s: the tool ran %d times", r.name, c.id, n)
		case c.ok && n < 1:
			ck.fail("call replayed", "%s: call %s succeeded and the tool ran %d times", r.name, c.id, n)
		case c.notSent && n != 0:
			ck.fail("not-sent call ran", "%s: call %s failed as not sent and the tool ran %d times", r.name, c.id, n)
		}
	}
}

// hung lists the calls that have not returned.
func (r *rig) hung() []string {
	var out []string
	for _, c := range r.calls.calls() {
		if !c.done {
			out = append(out, fmt.Sprintf("%s (deadline %s ago)", c.id, time.Since(c.deadline).Round(time.Millisecond)))
		}
	}
	return out
}

// classCounts merges failure counts.
func classCounts(into map[string]int, l *ledger) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, v := range l.failed {
		into[k] += v
	}
}

func formatCounts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpsup/mcpsup/mcptest"
)

// FailureClass is one way a tools/call fails at the gateway: the first
// tools/call after it is installed gets the answer below; later ones pass.
type FailureClass struct {
	Name string
	Rule mcptest.Rule
}

// FailureClasses are the classes of figure 1, in report order. The 429
// carries Retry-After: 0 so that mcpsup's rate-limit window (which would
// refuse the next call locally, sending nothing) stays shut and the next
// call goes out like the baselines' does.
var FailureClasses = []FailureClass{
	{"500 plain text", mcptest.ToolCallServerError()},
	{"429 plain text", mcptest.ToolCallRateLimited(0)},
	{"403 HTML (WAF)", mcptest.ToolCallForbiddenHTML()},
	{"400 plain text", toolCallRule(mcptest.PlainText(http.StatusBadRequest, "Bad Request"))},
	{"404 with session", mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Session: mcptest.WithSession},
		Action: mcptest.PlainText(http.StatusNotFound, "session not found"),
	}},
	{"no status (reset)", toolCallRule(mcptest.Reset())},
}

func toolCallRule(a mcptest.Action) mcptest.Rule {
	return mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: a}
}

// ExtraResult is the cost of one failed tools/call for one client.
type ExtraResult struct {
	Class  string
	Client Client
	// Extra counts the requests the gateway saw, from the failed call until
	// the next call returned and the wire went quiet, other than the host's
	// own tools/call requests.
	Extra int
	// Breakdown lists Extra by JSON-RPC method (POST) or HTTP verb.
	Breakdown string
	// NextCallOK tells whether the call after the failed one succeeded.
	NextCallOK bool
	// NextCallSent tells whether that next call reached the wire.
	NextCallSent bool
	// CallErr is the failed call's error, shortened.
	CallErr string
	// Err is set when the scenario itself could not run.
	Err error
}

// ExtraRequests runs figure 1: every failure class against every client,
// each on a fresh server.
func ExtraRequests(ctx context.Context) []ExtraResult {
	var out []ExtraResult
	for _, fc := range FailureClasses {
		for _, k := range Clients {
			out = append(out, extraOne(ctx, fc, k))
		}
	}
	return out
}

func extraOne(ctx context.Context, fc FailureClass, k Client) ExtraResult {
	res := ExtraResult{Class: fc.Name, Client: k}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	if err != nil {
		res.Err = err
		return res
	}
	defer srv.Close()
	c, err := newClient(ctx, k, srv.URL(), srv.HTTPClient())
	if err != nil {
		res.Err = err
		return res
	}
	defer c.close()
	if err := c.call(ctx, "warm-up"); err != nil {
		res.Err = fmt.Errorf("warm-up call: %w", err)
		return res
	}
	log := srv.Log()
	settle(ctx, log, 150*time.Millisecond, 3*time.Second)
	log.Reset()

	rule := fc.Rule
	rule.Match.Occurrence = mcptest.First()
	srv.Gateway().Add(rule)
	err = c.call(ctx, "fails")
	if err == nil {
		res.Err = fmt.Errorf("the faulted call succeeded")
		return res
	}
	res.CallErr = shorten(err.Error(), 90)
	settle(ctx, log, 150*time.Millisecond, 5*time.Second)
	before := log.Count("tools/call")
	res.NextCallOK = c.call(ctx, "next") == nil
	settle(ctx, log, 150*time.Millisecond, 5*time.Second)
	res.NextCallSent = log.Count("tools/call") > before
	res.Extra, res.Breakdown = extraOf(log.Entries())
	return res
}

// requestOrder fixes the order of the breakdown.
var requestOrder = []string{"DELETE", "server/discover", "initialize", "notifications/initialized", "tools/list", "resources/list", "prompts/list", "resources/templates/list", "GET", "ping"}

func extraOf(entries []mcptest.Entry) (int, string) {
	counts := map[string]int{}
	n := 0
	for _, e := range entries {
		if e.Method == "tools/call" {
			continue
		}
		label := e.Method
		if e.Verb != http.MethodPost || label == "" {
			label = e.Verb
		}
		counts[label]++
		n++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		ia, ib := slices.Index(requestOrder, a), slices.Index(requestOrder, b)
		if ia < 0 {
			ia = len(requestOrder)
		}
		if ib < 0 {
			ib = len(requestOrder)
		}
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, counts[k])
	}
	return n, strings.Join(parts, ", ")
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

package probes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// s1Chain is how go-sdk v1.8.0 reports a non-2xx answer whose body is a
// JSON-RPC error with the request's id (mcp/streamable.go):
// `sending "<method>": <*jsonrpc.Error>: <-32005>: Bad Request`.
func s1Chain(method string, code int64, status string) error {
	return fmt.Errorf("sending %q: %w: %w: %v", method,
		&jsonrpc.Error{Code: code, Message: "Method not found"},
		&jsonrpc.Error{Code: -32005, Message: "rejected by transport"},
		status)
}

// rejected is go-sdk's bare -32005 for 500/502/503/504/429, body discarded.
func rejected(method, status string) error {
	return fmt.Errorf("%w: sending %q: %v", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}, method, status)
}

// wireErr is a go-sdk error annotated with the wire layer's facts.
func wireErr(l List, status int, rpcCode int64, err error) error {
	h := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: l.Method(), RequestID: "3", Status: status, SessionIDSent: true}, Err: err}
	if rpcCode != 0 {
		h.RPC = classify.RPCError{Present: true, Code: rpcCode, Message: "x", HasID: true}
		h.BodyRPCID = "3"
	}
	return h
}

// annotated wraps a Lister and passes each failed request's error, with the
// request's context, through fn, as a Lister that attaches the wire layer's
// facts per request does.
type annotated struct {
	Lister
	fn func(ctx context.Context, l List, err error) error
}

func (a annotated) wrap(ctx context.Context, l List, err error) error {
	if err == nil {
		return nil
	}
	return a.fn(ctx, l, err)
}

func (a annotated) ListTools(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
	items, next, err := a.Lister.ListTools(ctx, cursor)
	return items, next, a.wrap(ctx, Tools, err)
}

func (a annotated) ListResources(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
	items, next, err := a.Lister.ListResources(ctx, cursor)
	return items, next, a.wrap(ctx, Resources, err)
}

func (a annotated) ListPrompts(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
	items, next, err := a.Lister.ListPrompts(ctx, cursor)
	return items, next, a.wrap(ctx, Prompts, err)
}

func (a annotated) ListResourceTemplates(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
	items, next, err := a.Lister.ListResourceTemplates(ctx, cursor)
	return items, next, a.wrap(ctx, ResourceTemplates, err)
}

// settled is a slog handler that reports each settled list on a channel.
type settled struct{ ch chan ListReport }

func newSettled() *settled { return &settled{ch: make(chan ListReport, 16)} }

func (s *settled) logger() *slog.Logger { return slog.New(s) }

func (s *settled) Enabled(context.Context, slog.Level) bool { return true }
func (s *settled) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s *settled) WithGroup(string) slog.Handler            { return s }
func (s *settled) Handle(_ context.Context, r slog.Record) error {
	var rep ListReport
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "list":
			for _, l := range Lists() {
				if l.Method() == a.Value.String() {
					rep.List = l
				}
			}
		case "status":
			for st := Unsettled; st <= Failed; st++ {
				if st.String() == a.Value.String() {
					rep.Status = st
				}
			}
		case "warning":
			rep.Warning = a.Value.String()
		}
		return true
	})
	s.ch <- rep
	return nil
}

// waitSettled waits for list l's record.
func (s *settled) wait(t *testing.T, ctx context.Context, l List) ListReport {
	t.Helper()
	for {
		select {
		case r := <-s.ch:
			if r.List == l {
				return r
			}
		case <-ctx.Done():
			t.Fatalf("%s never settled", l)
		}
	}
}

func listErr(t *testing.T, err error) *ListError {
	t.Helper()
	var le *ListError
	if !errors.As(err, &le) {
		t.Fatalf("error %v (%T) is not a *ListError", err, err)
	}
	return le
}

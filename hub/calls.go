package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
)

// CallError is the error of a call routed by qualified name: which server,
// which item under which name, and the supervisor's error. When the call
// reached the supervisor, Err is (or wraps) its *supervisor.CallError, so
// errors.As finds the verdict and the delivery as for a single supervisor.
type CallError struct {
	// Op is the MCP method: "tools/call", "prompts/get" or "resources/read".
	Op string
	// Name is the qualified name called.
	Name string
	// Server is the server it routes to ("" when the name is unknown).
	Server string
	// ID is the item on the server: tool or prompt name, resource URI.
	ID string
	// Err is ErrUnknownName, ErrUnknownServer or the supervisor's error.
	Err error

	redact *events.Redactor
	// notServing names, for ErrUnknownName, the servers whose items are
	// not in the merged catalog now (not ready yet, failed, standby), with
	// their state: the name may be one of theirs.
	notServing []string
}

// Error names the server and the item, e.g. `hub: tools/call "search__find"
// (tool "find" of server "search"): mcpsup: tools/call "find": rate-limited
// (HTTP 429 …)`, with the servers' header values masked.
func (e *CallError) Error() string {
	var s string
	if e.Server == "" {
		s = fmt.Sprintf("hub: %s %q: %v", e.Op, e.Name, e.Err)
		if len(e.notServing) > 0 {
			s += fmt.Sprintf("; servers not serving their items now: %s", strings.Join(e.notServing, ", "))
		}
	} else {
		s = fmt.Sprintf("hub: %s %q (%s %q of server %q): %v", e.Op, e.Name, itemWord(e.Op), e.ID, e.Server, e.Err)
	}
	return e.redact.Text(s)
}

func (e *CallError) Unwrap() error { return e.Err }

func itemWord(op string) string {
	switch op {
	case "prompts/get":
		return "prompt"
	case "resources/read":
		return "resource"
	}
	return "tool"
}

// route finds the server and item of a qualified name in m.
func route[T any](h *Hub, m *merged[T], op, name string) (*entry, string, *CallError) {
	h.catMu.Lock()
	cl, ok := m.lookup(name)
	h.catMu.Unlock()
	if !ok {
		return nil, "", &CallError{Op: op, Name: name, Err: ErrUnknownName, redact: &h.redact, notServing: h.notServing()}
	}
	e := h.entry(cl.server)
	if e == nil {
		return nil, "", &CallError{Op: op, Name: name, Server: cl.server, ID: cl.id, Err: ErrUnknownServer, redact: &h.redact}
	}
	return e, cl.id, nil
}

// call routes the qualified name of m and runs do on its server's
// supervisor with the item's id.
func call[T, R any](h *Hub, m *merged[T], op, name string, do func(sup *supervisor.Supervisor, id string) (R, error)) (R, error) {
	var zero R
	e, id, ce := route(h, m, op, name)
	if ce != nil {
		return zero, ce
	}
	res, err := do(e.current(), id)
	if err != nil {
		// Health's last verdict is the call's as soon as the caller has
		// it: the call-failed event reaches the hub's sink later.
		if sce, ok := errors.AsType[*supervisor.CallError](err); ok {
			h.noteFailure(e, sce.Verdict)
		}
		return zero, &CallError{Op: op, Name: name, Server: e.name, ID: id, Err: err, redact: &h.redact}
	}
	return res, nil
}

// notServing names the servers that are not ready, or stand by for another
// replica, each as [describeServers] does: what an unknown name's error
// lists, since their items are not in the merged catalog.
func (h *Hub) notServing() []string {
	var out []Health
	for _, hl := range h.Health() {
		if hl.State == supervisor.Ready && hl.Lease != LeaseStandby {
			continue
		}
		out = append(out, hl)
	}
	return describeServers(out)
}

// CallTool calls the tool of the merged catalog named params.Name (a
// qualified name) on its server, with params.Name replaced by the tool's own
// name; the call then behaves as supervisor.Supervisor.CallTool: it waits
// for a recovering server, and it is sent once more only when
// Config.Supervisor.Resend is supervisor.ResendSafe and its failure is
// Resendable (with the default, ResendNever, it is never replayed; the
// hub itself never sends a call again). Errors are *CallError: the name
// unknown in the merged catalog (ErrUnknownName, nothing sent), or the
// supervisor's *supervisor.CallError wrapped.
func (h *Hub) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if params == nil {
		return nil, errors.New("hub: CallTool: nil params")
	}
	return call(h, h.tools, "tools/call", params.Name, func(sup *supervisor.Supervisor, id string) (*mcp.CallToolResult, error) {
		p := *params
		p.Name = id
		return sup.CallTool(ctx, &p)
	})
}

// GetPrompt gets the prompt of the merged catalog named params.Name (a
// qualified name) from its server; errors as for CallTool.
func (h *Hub) GetPrompt(ctx context.Context, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	if params == nil {
		return nil, errors.New("hub: GetPrompt: nil params")
	}
	return call(h, h.prompts, "prompts/get", params.Name, func(sup *supervisor.Supervisor, id string) (*mcp.GetPromptResult, error) {
		p := *params
		p.Name = id
		return sup.GetPrompt(ctx, &p)
	})
}

// ReadResource reads the resource of the merged catalog whose qualified name
// is name (Resources lists them with their URIs) from its server; errors as
// for CallTool.
func (h *Hub) ReadResource(ctx context.Context, name string) (*mcp.ReadResourceResult, error) {
	return call(h, h.resources, "resources/read", name, func(sup *supervisor.Supervisor, uri string) (*mcp.ReadResourceResult, error) {
		return sup.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	})
}

// Tools returns the merged tool catalog sorted by qualified name. The slice
// is shared until the next change: do not modify it. A server that is
// recovering keeps its items (calls to them wait for it, as on the
// supervisor); Health says which servers are ready.
func (h *Hub) Tools() []Tool { return mergedView(h, h.tools) }

// Prompts returns the merged prompts sorted by qualified name (shared, as
// for Tools).
func (h *Hub) Prompts() []Prompt { return mergedView(h, h.prompts) }

// Resources returns the merged resources sorted by qualified name (shared,
// as for Tools).
func (h *Hub) Resources() []Resource { return mergedView(h, h.resources) }

func mergedView[T any](h *Hub, m *merged[T]) []Item[T] {
	h.catMu.Lock()
	defer h.catMu.Unlock()
	return m.items()
}

// MCPTools returns the merged tools as go-sdk tools named by their
// qualified names, ready to hand to a model. The tools are shared: do not
// modify them.
func (h *Hub) MCPTools() []*mcp.Tool {
	ts := h.Tools()
	out := make([]*mcp.Tool, len(ts))
	for i, t := range ts {
		out[i] = t.Def
	}
	return out
}

// Tool, Prompt and Resource are the items of the merged catalog.
type (
	Tool     = Item[mcp.Tool]
	Prompt   = Item[mcp.Prompt]
	Resource = Item[mcp.Resource]
)

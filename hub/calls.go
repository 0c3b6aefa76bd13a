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

// CallError is the error of a call routed by qualified name. When the call
// reached the supervisor, Err is (or wraps) its *supervisor.CallError, so
// errors.As finds the verdict and the delivery as for one supervisor.
type CallError struct {
	Op     string // the MCP method: "tools/call", "prompts/get" or "resources/read"
	Name   string // the qualified name called
	Server string // the server it routes to ("" when the name is unknown)
	ID     string // the item on the server: tool or prompt name, resource URI
	Err    error  // ErrUnknownName, ErrUnknownServer or the supervisor's error

	redact     *events.Redactor
	notServing []string // for ErrUnknownName: the servers whose items are not merged now
}

// Error names the server and the item, e.g. `hub: tools/call "search__find"
// (tool "find" of server "search"): …`, masked as the hub's events; for an
// unknown name, the servers not serving their items now.
func (e *CallError) Error() string {
	var s string
	if e.Server == "" {
		s = fmt.Sprintf("hub: %s %q: %v", e.Op, e.Name, e.Err)
		if len(e.notServing) > 0 {
			s += fmt.Sprintf("; servers not serving their items now: %s", strings.Join(e.notServing, ", "))
		}
	} else {
		kind, _, _ := strings.Cut(e.Op, "/") // "tools/call": "tool"
		item := strings.TrimSuffix(kind, "s")
		s = fmt.Sprintf("hub: %s %q (%s %q of server %q): %v", e.Op, e.Name, item, e.ID, e.Server, e.Err)
	}
	return e.redact.Text(s)
}

func (e *CallError) Unwrap() error { return e.Err }

// route finds the server and the item's own id of m's qualified name.
func route[T any](h *Hub, m *merged[T], op, name string) (*entry, string, *CallError) {
	h.catMu.Lock()
	cl, ok := m.owner[name]
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

// call routes the request params (nil: an error) by the qualified name at
// *name(params) to its server under the item's own id.
func call[T, P, R any](ctx context.Context, h *Hub, m *merged[T], op string, params *P, name func(*P) *string,
	do func(*supervisor.Supervisor, context.Context, *P) (R, error)) (R, error) {
	var zero R
	if params == nil {
		return zero, fmt.Errorf("hub: %s: nil params", op)
	}
	p := *params
	qn := *name(&p)
	e, id, ce := route(h, m, op, qn)
	if ce != nil {
		return zero, ce
	}
	*name(&p) = id
	res, err := do(e.current(), ctx, &p)
	if err != nil {
		// Before the call-failed event: Health has it when the caller does.
		if sce, ok := errors.AsType[*supervisor.CallError](err); ok {
			h.noteFailure(e, sce.Verdict)
		}
		return zero, &CallError{Op: op, Name: qn, Server: e.name, ID: id, Err: err, redact: &h.redact}
	}
	return res, nil
}

// notServing describes the servers whose items are not merged now.
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
// qualified name) on its server under its own name, as
// supervisor.Supervisor.CallTool does (waiting for a recovering server,
// resent only as Config.Supervisor.Recovery.Resend allows; the hub never resends).
// Errors are *CallError: ErrUnknownName (nothing sent), or the supervisor's
// *supervisor.CallError wrapped.
func (h *Hub) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return call(ctx, h, h.tools, "tools/call", params, func(p *mcp.CallToolParams) *string { return &p.Name }, (*supervisor.Supervisor).CallTool)
}

// GetPrompt gets the prompt of the merged catalog named params.Name (a
// qualified name) from its server; errors as for CallTool.
func (h *Hub) GetPrompt(ctx context.Context, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return call(ctx, h, h.prompts, "prompts/get", params, func(p *mcp.GetPromptParams) *string { return &p.Name }, (*supervisor.Supervisor).GetPrompt)
}

// ReadResource reads the resource of the merged catalog whose qualified name
// is name (Resources lists them with their URIs) from its server; errors as
// for CallTool.
func (h *Hub) ReadResource(ctx context.Context, name string) (*mcp.ReadResourceResult, error) {
	return call(ctx, h, h.resources, "resources/read", &mcp.ReadResourceParams{URI: name},
		func(p *mcp.ReadResourceParams) *string { return &p.URI }, (*supervisor.Supervisor).ReadResource)
}

// Tools returns the merged tool catalog sorted by qualified name, shared
// until the next change: do not modify it. A recovering server keeps its
// items (calls to them wait for it); Health says which servers are ready.
func (h *Hub) Tools() []Tool { return mergedView(h, h.tools) }

// Prompts returns the merged prompts, as Tools does.
func (h *Hub) Prompts() []Prompt { return mergedView(h, h.prompts) }

// Resources returns the merged resources, as Tools does.
func (h *Hub) Resources() []Resource { return mergedView(h, h.resources) }

func mergedView[T any](h *Hub, m *merged[T]) []Item[T] {
	h.catMu.Lock()
	defer h.catMu.Unlock()
	return m.items()
}

// MCPTools returns the merged tools as go-sdk tools named by their
// qualified names (shared: do not modify them).
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

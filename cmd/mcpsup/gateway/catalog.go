package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/supervisor"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shown is what the downstream server lists, as last synced: each item's
// definition as the hub gave it (compared by pointer first, by JSON when the
// pointer changed) and the server it routes to.
type shown struct {
	tools     map[string]*mcp.Tool     // by qualified name
	prompts   map[string]*mcp.Prompt   // by qualified name
	resources map[string]shownResource // by URI
	templates map[string]shownTemplate // by URI template
	skipped   map[string]string        // item: why it is not listed (logged once)
}

type shownResource struct {
	def  *mcp.Resource
	name string // the qualified name hub.ReadResource routes
}

type shownTemplate struct {
	def    *mcp.ResourceTemplate
	server string
}

func newShown() shown {
	return shown{
		tools:     map[string]*mcp.Tool{},
		prompts:   map[string]*mcp.Prompt{},
		resources: map[string]shownResource{},
		templates: map[string]shownTemplate{},
		skipped:   map[string]string{},
	}
}

// sync makes the downstream server list what the hub's merged catalog holds
// now: the changed items are added (an add replaces), the gone ones removed.
// go-sdk sends the list_changed notifications of each kind that changed.
// It runs on the sync goroutine only, and touches only what differs: an
// unchanged item is never removed and added again.
func (g *Gateway) sync() {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	s := &g.shown
	names := g.hub.Names() // sorted
	plain := g.cfg.PlainNames && len(names) == 1
	tools, prompts, resources := g.hub.Tools(), g.hub.Prompts(), g.hub.Resources()
	routes := make(map[string]string, len(tools)+len(prompts))
	listed := make(map[string]bool, len(names)) // server: it has items in the merged catalog

	// Tools.
	want := make(map[string]*mcp.Tool, len(tools))
	for _, it := range tools {
		t := it.Def
		if plain {
			c := *t
			c.Name = it.ID
			t = &c
		}
		want[t.Name] = t
		routes[t.Name] = it.Name
		listed[it.Server] = true
	}
	reconcile(g, s.tools, want, func(a, b *mcp.Tool) bool { return sameJSON(a, b) },
		func(_ string, t *mcp.Tool) string { return g.addTool(t) }, g.server.RemoveTools)

	// Prompts.
	wantP := make(map[string]*mcp.Prompt, len(prompts))
	for _, it := range prompts {
		p := it.Def
		if plain {
			c := *p
			c.Name = it.ID
			p = &c
		}
		wantP[p.Name] = p
		routes[p.Name] = it.Name
		listed[it.Server] = true
	}
	reconcile(g, s.prompts, wantP, func(a, b *mcp.Prompt) bool { return sameJSON(a, b) },
		func(_ string, p *mcp.Prompt) string { g.server.AddPrompt(p, g.getPrompt); return "" }, g.server.RemovePrompts)

	// Resources, by URI: go-sdk routes resources/read by URI. Two servers
	// that list one URI cannot both be read by it: the first qualified name
	// in order keeps it.
	wantR := make(map[string]shownResource, len(resources))
	for _, r := range resources { // sorted by qualified name
		listed[r.Server] = true
		if _, ok := wantR[r.Def.URI]; !ok {
			wantR[r.Def.URI] = shownResource{def: r.Def, name: r.Name}
		}
	}
	reconcile(g, s.resources, wantR,
		func(a, b shownResource) bool { return a.name == b.name && sameJSON(a.def, b.def) },
		func(_ string, r shownResource) string {
			return safely(func() { g.server.AddResource(r.def, g.readResource(r.name)) })
		}, g.server.RemoveResources)

	g.routeMu.Lock()
	g.routes = routes
	g.routeMu.Unlock()

	// Resource templates: the hub does not merge them, so the gateway
	// takes each serving server's from its supervisor's catalog, named
	// server__name as the hub names the rest.
	wantT := g.templates(names, listed)
	reconcile(g, s.templates, wantT,
		func(a, b shownTemplate) bool { return a.server == b.server && sameJSON(a.def, b.def) },
		func(_ string, t shownTemplate) string {
			return safely(func() { g.server.AddResourceTemplate(t.def, g.readTemplate(t.server)) })
		}, g.server.RemoveResourceTemplates)
}

// reconcile makes the downstream server list want, of which shown is what
// it lists now (keyed by name, URI or URI template): it removes what want
// lacks, and adds each item of want that is not the same as the one shown
// (add returns why go-sdk could not list one: then it is skipped, and
// removed if an older version was shown). An unchanged item is never
// removed and added again. Called with syncMu held.
func reconcile[T any](g *Gateway, shown, want map[string]T, same func(a, b T) bool, add func(key string, v T) string, remove func(keys ...string)) {
	var gone []string
	for k := range shown {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
		for _, k := range gone {
			delete(shown, k)
		}
	}
	for k, v := range want {
		if old, ok := shown[k]; ok && same(old, v) {
			continue
		}
		if why := add(k, v); why != "" {
			g.skip(k, why)
			if _, ok := shown[k]; ok {
				remove(k)
				delete(shown, k)
			}
			continue
		}
		shown[k] = v
	}
}

// skip logs, once per reason, an item the downstream server cannot list
// (by name, URI or URI template). The record of what was logged is cleared
// when it reaches maxSkipped.
func (g *Gateway) skip(key, why string) {
	if g.shown.skipped[key] == why {
		return
	}
	if len(g.shown.skipped) >= maxSkipped {
		clear(g.shown.skipped)
	}
	g.shown.skipped[key] = why
	g.log.Warn("item not listed", "item", key, "reason", why)
}

// maxSkipped bounds the record of items logged as not listed.
const maxSkipped = 1024

// templates returns the resource templates of the servers among names
// (sorted) that are ready or listed (items in the merged catalog: recovering
// after a ready, the hub keeps their items, and so does the gateway), by URI
// template; the lower server name keeps a URI template two servers list.
// It reads each server's state and catalog once, and no health list: a sync
// runs on every server's ready, so with N servers it must stay O(N).
func (g *Gateway) templates(names []string, listed map[string]bool) map[string]shownTemplate {
	out := map[string]shownTemplate{}
	naming := g.cfg.Hub.Naming
	if naming == nil {
		naming = hub.DefaultNaming
	}
	for _, name := range names {
		sup := g.hub.Supervisor(name)
		if sup == nil || !(listed[name] || sup.State() == supervisor.Ready) {
			continue
		}
		cat := sup.Catalog()
		if cat.Generation == 0 {
			continue
		}
		for _, t := range cat.ResourceTemplates {
			if t == nil || t.URITemplate == "" {
				continue
			}
			if _, ok := out[t.URITemplate]; ok {
				continue
			}
			c := *t
			if !g.cfg.PlainNames || len(names) != 1 {
				c.Name = naming(name, t.Name)
			}
			out[t.URITemplate] = shownTemplate{def: &c, server: name}
		}
	}
	return out
}

// addTool adds t to the downstream server, or says why it cannot: go-sdk
// panics on a tool whose input schema is not a JSON object schema (MCP
// 2025-11-25, server/tools.mdx: inputSchema "MUST be a valid JSON Schema
// object", of type "object"), and an upstream is not trusted to send one.
func (g *Gateway) addTool(t *mcp.Tool) (why string) {
	return safely(func() { g.server.AddTool(t, g.callTool) })
}

// safely runs add, one of go-sdk's Add methods, which panic on what they
// cannot list (a tool's schema, a resource's URI that does not parse, a URI
// template that is not one: an upstream's data), and returns the panic's
// text, "" when none. go-sdk checks before it changes anything, and its
// lock is released by its defer.
func safely(add func()) (why string) {
	defer func() {
		if r := recover(); r != nil {
			why = fmt.Sprint(r)
		}
	}()
	add()
	return ""
}

// sameJSON reports whether a and b have the same JSON form (the same
// pointer is the same).
func sameJSON[T any](a, b *T) bool {
	if a == b {
		return true
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// callTool routes a downstream tools/call to the hub by qualified name, with
// the caller's progress token relayed and its cancellation passed on (the
// call's context is the downstream request's: go-sdk cancels it on
// notifications/cancelled, MCP 2025-11-25 basic/utilities/cancellation.mdx).
func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{
		Name:      g.route(req.Params.Name),
		Arguments: req.Params.Arguments,
		Meta:      copyMeta(req.Params.Meta),
	}
	ctx, done := g.relay.begin(ctx, req.Session, req.Params.GetProgressToken(), params)
	defer done()
	return roundTrip(ctx, g.relay, req.Session, "tools/call "+req.Params.Name, input{req.Params.InputResponses, req.Params.RequestState},
		func(ctx context.Context, in input) (*mcp.CallToolResult, error) {
			p := *params
			p.InputResponses, p.RequestState = in.responses, in.state
			res, err := g.hub.CallTool(ctx, &p)
			if err != nil {
				return nil, g.callError(err)
			}
			return res, nil
		}, pendingTool, inputTool)
}

func (g *Gateway) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	params := &mcp.GetPromptParams{
		Name:      g.route(req.Params.Name),
		Arguments: req.Params.Arguments,
		Meta:      copyMeta(req.Params.Meta),
	}
	ctx, done := g.relay.begin(ctx, req.Session, req.Params.GetProgressToken(), params)
	defer done()
	return roundTrip(ctx, g.relay, req.Session, "prompts/get "+req.Params.Name, input{req.Params.InputResponses, req.Params.RequestState},
		func(ctx context.Context, in input) (*mcp.GetPromptResult, error) {
			p := *params
			p.InputResponses, p.RequestState = in.responses, in.state
			res, err := g.hub.GetPrompt(ctx, &p)
			if err != nil {
				return nil, g.callError(err)
			}
			return res, nil
		}, pendingPrompt, inputPrompt)
}

// readResource reads the resource of qualified name name. The hub reads a
// listed resource by its name alone; a round that carries input (a
// client's retry, or the gateway's for a 2025-era client) goes to the
// resource's server with its URI, as a template's read does.
func (g *Gateway) readResource(name string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ctx, done := g.relay.begin(ctx, req.Session, nil, nil)
		defer done()
		return roundTrip(ctx, g.relay, req.Session, "resources/read "+req.Params.URI, input{req.Params.InputResponses, req.Params.RequestState},
			func(ctx context.Context, in input) (*mcp.ReadResourceResult, error) {
				if in.responses == nil && in.state == "" {
					res, err := g.hub.ReadResource(ctx, name)
					if err != nil {
						return nil, g.callError(err)
					}
					return res, nil
				}
				return g.readFrom(ctx, g.resourceServer(req.Params.URI), req, in)
			}, pendingResource, inputResource)
	}
}

// readTemplate reads a URI of one of server's templates from that server
// (looked up at each read: a reload may have replaced its supervisor).
func (g *Gateway) readTemplate(server string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ctx, done := g.relay.begin(ctx, req.Session, nil, nil)
		defer done()
		return roundTrip(ctx, g.relay, req.Session, "resources/read "+req.Params.URI, input{req.Params.InputResponses, req.Params.RequestState},
			func(ctx context.Context, in input) (*mcp.ReadResourceResult, error) {
				return g.readFrom(ctx, server, req, in)
			}, pendingResource, inputResource)
	}
}

// readFrom reads req's URI from server, with the round's input.
func (g *Gateway) readFrom(ctx context.Context, server string, req *mcp.ReadResourceRequest, in input) (*mcp.ReadResourceResult, error) {
	sup := g.hub.Supervisor(server)
	if sup == nil {
		return nil, g.callError(&hub.ServerError{Server: server, Err: hub.ErrUnknownServer})
	}
	res, err := sup.ReadResource(ctx, &mcp.ReadResourceParams{URI: req.Params.URI, Meta: copyMeta(req.Params.Meta),
		InputResponses: in.responses, RequestState: in.state})
	if err != nil {
		return nil, g.serverError(server, err)
	}
	return res, nil
}

// complete routes completion/complete: a prompt argument's to the prompt's
// server (by its qualified name), a resource template's to the server whose
// template it is (by its URI template), each with the server's own ref.
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	if req.Params == nil || req.Params.Ref == nil {
		return nil, invalidParams("completion/complete without a ref")
	}
	ref := *req.Params.Ref
	var server string
	switch ref.Type {
	case "ref/prompt":
		q := g.route(ref.Name)
		for _, p := range g.hub.Prompts() {
			if p.Name == q {
				server, ref.Name = p.Server, p.ID
				break
			}
		}
	case "ref/resource":
		g.syncMu.Lock()
		if t, ok := g.shown.templates[ref.URI]; ok {
			server = t.server
		}
		g.syncMu.Unlock()
	}
	if server == "" {
		return nil, invalidParams(fmt.Sprintf("completion/complete: no prompt or resource template %q", ref.Name+ref.URI))
	}
	sup := g.hub.Supervisor(server)
	if sup == nil {
		return nil, g.callError(&hub.ServerError{Server: server, Err: hub.ErrUnknownServer})
	}
	params := *req.Params
	params.Ref = &ref
	params.Meta = copyMeta(params.Meta)
	res, err := sup.Complete(ctx, &params)
	if err != nil {
		return nil, g.serverError(server, err)
	}
	return res, nil
}

// route returns the qualified name of the tool or prompt the downstream
// server lists as name (the same name, but with Config.PlainNames).
func (g *Gateway) route(name string) string {
	g.routeMu.RLock()
	defer g.routeMu.RUnlock()
	if q, ok := g.routes[name]; ok {
		return q
	}
	return name
}

// copyMeta copies m for the upstream request without the keys that belong
// to the downstream hop: the progress token (the relay sets the gateway's
// own) and the keys MCP reserves (MCP 2026-07-28, basic/index.mdx, _meta:
// "Any prefix where the second label is modelcontextprotocol or mcp is
// reserved", such as io.modelcontextprotocol/protocolVersion, the
// per-request protocol fields of the client's era, which the supervisor
// sets for its own hop: a 2026-07-28 client's version sent on to a 2025
// server would have its call refused).
func copyMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if k == "progressToken" || reservedMetaKey(k) {
			continue
		}
		if out == nil {
			out = make(mcp.Meta, len(m))
		}
		out[k] = v
	}
	return out
}

// reservedMetaKey reports whether k's prefix (before '/') has
// "modelcontextprotocol" or "mcp" as its second label.
func reservedMetaKey(k string) bool {
	prefix, _, ok := strings.Cut(k, "/")
	if !ok {
		return false
	}
	labels := strings.Split(prefix, ".")
	return len(labels) > 1 && (labels[1] == "modelcontextprotocol" || labels[1] == "mcp")
}

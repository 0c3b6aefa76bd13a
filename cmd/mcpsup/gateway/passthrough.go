//lint:file-ignore SA1019 logging/setLevel, deprecated from protocol 2026-07-28 on (SEP-2577), is passed on to 2025-era servers

package gateway

import (
	"context"

	"github.com/mcpsup/mcpsup/supervisor"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resourceServer returns the server a resource URI is read from: the server
// of the listed resource with that URI, else of the template that lists it
// is not known without matching, so the single server when there is one.
func (g *Gateway) resourceServer(uri string) string {
	g.syncMu.Lock()
	r, ok := g.shown.resources[uri]
	g.syncMu.Unlock()
	if ok {
		for _, it := range g.hub.Resources() {
			if it.Name == r.name {
				return it.Server
			}
		}
	}
	if names := g.hub.Names(); len(names) == 1 {
		return names[0]
	}
	return ""
}

// subscribe passes resources/subscribe on to the resource's server (MCP
// 2025-11-25, server/resources.mdx, Subscriptions) once per URI: the first
// downstream subscription subscribes upstream, later ones only count. go-sdk
// records the session's subscription when this returns nil, and sends it
// the updates ResourceUpdated is given.
func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	server := g.resourceServer(req.Params.URI)
	sup := g.hub.Supervisor(server)
	if sup == nil {
		return invalidParams("resources/subscribe: no server lists " + req.Params.URI)
	}
	g.subMu.Lock()
	defer g.subMu.Unlock()
	if g.subs[req.Params.URI] == 0 {
		if err := sup.Subscribe(ctx, &mcp.SubscribeParams{URI: req.Params.URI}); err != nil {
			return g.serverError(server, err)
		}
	}
	g.subs[req.Params.URI]++
	return nil
}

// unsubscribe ends the upstream subscription with the last downstream one.
func (g *Gateway) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	server := g.resourceServer(req.Params.URI)
	sup := g.hub.Supervisor(server)
	if sup == nil {
		return invalidParams("resources/unsubscribe: no server lists " + req.Params.URI)
	}
	g.subMu.Lock()
	defer g.subMu.Unlock()
	if g.subs[req.Params.URI] <= 1 {
		delete(g.subs, req.Params.URI)
		if err := sup.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: req.Params.URI}); err != nil {
			return g.serverError(server, err)
		}
		return nil
	}
	g.subs[req.Params.URI]--
	return nil
}

// resourceUpdated passes an upstream notifications/resources/updated on to
// the downstream sessions subscribed to the URI.
func (g *Gateway) resourceUpdated(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if req == nil || req.Params == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultProgressTimeout)
	defer cancel()
	_ = g.server.ResourceUpdated(ctx, req.Params)
}

// logLevelMiddleware passes a downstream logging/setLevel on to every
// server (MCP 2025-11-25, server/utilities/logging.mdx: the server sends
// notifications/message at or above the level the client set); the last
// level set is every server's. go-sdk answers the client itself.
func (g *Gateway) logLevelMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "logging/setLevel" || err != nil {
			return res, err
		}
		p, ok := req.GetParams().(*mcp.SetLoggingLevelParams)
		if !ok || p == nil {
			return res, err
		}
		for _, name := range g.hub.Names() {
			if sup := g.hub.Supervisor(name); sup != nil && sup.State() == supervisor.Ready {
				if e := sup.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: p.Level}); e != nil {
					g.log.Debug("log level not set upstream", "server", name, "error", e)
				}
			}
		}
		return res, err
	}
}

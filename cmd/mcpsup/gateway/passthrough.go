//lint:file-ignore SA1019 logging/setLevel, deprecated from protocol 2026-07-28 on (SEP-2577), is passed on to 2025-era servers

package gateway

import (
	"context"
	"time"

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

// DefaultUnsubscribeTimeout bounds the upstream resources/unsubscribe sent
// when the last downstream session holding a URI's subscription ends.
const DefaultUnsubscribeTimeout = 5 * time.Second

// subscribe passes resources/subscribe on to the resource's server (MCP
// 2025-11-25, server/resources.mdx, Subscriptions) once per URI: the first
// downstream session subscribed subscribes upstream, later ones are only
// recorded (a session subscribing again to a URI it holds changes nothing,
// as go-sdk records it once). go-sdk records the session's subscription when
// this returns nil, and sends it the updates ResourceUpdated is given. The
// upstream subscription follows the sessions that hold it: the last one's
// unsubscribe, or its end (endSession), unsubscribes upstream.
func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	server := g.resourceServer(uri)
	sup := g.hub.Supervisor(server)
	if sup == nil {
		return invalidParams("resources/subscribe: no server lists " + uri)
	}
	g.subMu.Lock()
	defer g.subMu.Unlock()
	holders := g.subs[uri]
	if len(holders) == 0 {
		if err := sup.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			return g.serverError(server, err)
		}
		holders = map[*mcp.ServerSession]struct{}{}
		g.subs[uri] = holders
	}
	holders[req.Session] = struct{}{}
	if _, ok := g.watched[req.Session]; !ok && req.Session != nil {
		g.watched[req.Session] = struct{}{}
		go g.watchSession(req.Session)
	}
	return nil
}

// unsubscribe ends the upstream subscription with the last downstream
// session that holds it.
func (g *Gateway) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	uri := req.Params.URI
	server := g.resourceServer(uri)
	sup := g.hub.Supervisor(server)
	if sup == nil {
		return invalidParams("resources/unsubscribe: no server lists " + uri)
	}
	g.subMu.Lock()
	defer g.subMu.Unlock()
	holders, ok := g.subs[uri]
	if !ok {
		return nil // not subscribed upstream: nothing to end
	}
	delete(holders, req.Session)
	if len(holders) > 0 {
		return nil
	}
	delete(g.subs, uri)
	if err := sup.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		return g.serverError(server, err)
	}
	return nil
}

// watchSession waits for the end of a downstream session that subscribed
// (one goroutine per such session, living as long as it), then drops its
// subscriptions: a client that goes away without resources/unsubscribe
// must not keep the upstream subscription for ever.
func (g *Gateway) watchSession(ss *mcp.ServerSession) {
	_ = ss.Wait()
	g.endSession(ss)
}

// endSession removes ss from every URI's holders and unsubscribes upstream
// each URI it was the last holder of (each bounded by
// DefaultUnsubscribeTimeout; a failure is logged, the URI forgotten).
func (g *Gateway) endSession(ss *mcp.ServerSession) {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	g.subMu.Lock()
	defer g.subMu.Unlock()
	delete(g.watched, ss)
	for uri, holders := range g.subs {
		if _, ok := holders[ss]; !ok {
			continue
		}
		delete(holders, ss)
		if len(holders) > 0 {
			continue
		}
		delete(g.subs, uri)
		server := g.resourceServer(uri)
		sup := g.hub.Supervisor(server)
		if sup == nil || closed {
			continue // its server left the hub (or the hub ends), and the subscription with it
		}
		ctx, cancel := context.WithTimeout(context.Background(), DefaultUnsubscribeTimeout)
		err := sup.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
		cancel()
		if err != nil {
			g.log.Warn("resource not unsubscribed upstream after its last client left", "server", server, "uri", uri, "error", err)
		}
	}
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
// ready server that declared the logging capability (MCP 2025-11-25,
// server/utilities/logging.mdx: "Servers that emit log messages MUST
// declare the logging capability"; the server sends notifications/message
// at or above the level the client set); the last level set is theirs. A
// server that did not declare it is not asked: it would answer -32601
// (Method not found). go-sdk answers the client itself.
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
			if sup := g.hub.Supervisor(name); sup != nil && sup.State() == supervisor.Ready && declaresLogging(sup) {
				if e := sup.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: p.Level}); e != nil {
					g.log.Debug("log level not set upstream", "server", name, "error", e)
				}
			}
		}
		return res, err
	}
}

// declaresLogging reports whether the server's initialize result declared
// the logging capability.
func declaresLogging(sup *supervisor.Supervisor) bool {
	ir := sup.InitializeResult()
	return ir != nil && ir.Capabilities != nil && ir.Capabilities.Logging != nil
}

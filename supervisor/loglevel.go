package supervisor

import (
	"context"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/msgcheck"
)

// metaLogLevel is the `_meta` key of a request's log level from protocol
// 2026-07-28 on (server/utilities/logging.mdx, "Per-request log level"):
// the server "MUST NOT emit notifications/message for a request that does
// not include this field". That era removed `logging/setLevel`
// (changelog.mdx, item 5).
const metaLogLevel = "io.modelcontextprotocol/logLevel"

// logLevelMeta is the sending middleware that carries the level the host
// set (SetLoggingLevel) in the `_meta` of each request of a 2026-07-28
// session, in a shallow copy of the params with a copy of `_meta`, so the
// caller's params are never changed. A 2025-era session, a host that set no
// level, or params of a kind it does not know go out as they are. Safe for
// concurrent use: it reads the level atomically.
func (s *Supervisor) logLevelMeta() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			level := s.level()
			if level == "" || method == httpsession.MethodListen {
				return next(ctx, method, req) // logging.mdx: never delivered on a listen stream
			}
			r, ok := req.(*mcp.ClientRequest[mcp.Params])
			if !ok {
				return next(ctx, method, req)
			}
			if r.Session == nil {
				return next(ctx, method, req)
			}
			if ir := r.Session.InitializeResult(); ir == nil || !msgcheck.ModernVersion(ir.ProtocolVersion) {
				return next(ctx, method, req)
			}
			p := shallowParams(r.Params)
			if p == nil {
				return next(ctx, method, req)
			}
			meta := p.GetMeta()
			m := make(map[string]any, len(meta)+1)
			maps.Copy(m, meta)
			m[metaLogLevel] = level
			p.SetMeta(m)
			return next(ctx, method, &mcp.ClientRequest[mcp.Params]{Session: r.Session, Params: p})
		}
	}
}

// level returns the level the host set, "" when none.
func (s *Supervisor) level() string {
	if l := s.logLevel.Load(); l != nil {
		return *l
	}
	return ""
}

// shallowParams returns a shallow copy of the params of a request that
// may produce log messages, nil for any other kind (and for nil: go-sdk
// gives every 2026-07-28 request params, to carry its own `_meta`).
func shallowParams(p mcp.Params) mcp.Params {
	switch p := p.(type) {
	case *mcp.CallToolParams:
		return clonePtr(p)
	case *mcp.CallToolParamsRaw:
		return clonePtr(p)
	case *mcp.GetPromptParams:
		return clonePtr(p)
	case *mcp.ReadResourceParams:
		return clonePtr(p)
	case *mcp.CompleteParams:
		return clonePtr(p)
	case *mcp.ListToolsParams:
		return clonePtr(p)
	case *mcp.ListPromptsParams:
		return clonePtr(p)
	case *mcp.ListResourcesParams:
		return clonePtr(p)
	case *mcp.ListResourceTemplatesParams:
		return clonePtr(p)
	}
	return nil
}

func clonePtr[T any, P interface {
	*T
	mcp.Params
}](p P) mcp.Params {
	if p == nil {
		return nil
	}
	cp := *p
	return P(&cp)
}

package supervisor

import (
	"context"
	"maps"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/msgcheck"
)

// logLevelMeta is the sending middleware that puts SetLoggingLevel's level
// in the `_meta` of each 2026-07-28 request, in copies of the params and
// `_meta`; other requests go out as they are.
func (s *Supervisor) logLevelMeta() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			level, _ := s.logLevel.Load().(string)
			r, ok := req.(*mcp.ClientRequest[mcp.Params])
			// logging.mdx: never delivered on a listen stream.
			if level == "" || method == httpsession.MethodListen || !ok || r.Session == nil {
				return next(ctx, method, req)
			}
			ir := r.Session.InitializeResult()
			p := shallowParams(r.Params)
			if ir == nil || !msgcheck.ModernVersion(ir.ProtocolVersion) || p == nil {
				return next(ctx, method, req)
			}
			m := map[string]any{}
			maps.Copy(m, p.GetMeta())
			//lint:ignore SA1019 the per-request log level is 2026-07-28's own (logging.mdx, "Per-request log level")
			m[mcp.MetaKeyLogLevel] = level
			p.SetMeta(m)
			return next(ctx, method, &mcp.ClientRequest[mcp.Params]{Session: r.Session, Params: p})
		}
	}
}

// shallowParams returns a shallow copy of the params of a request that
// may produce log messages, nil for any other kind (or nil params).
func shallowParams(p mcp.Params) mcp.Params {
	switch p.(type) {
	case *mcp.CallToolParams, *mcp.CallToolParamsRaw, *mcp.GetPromptParams, *mcp.ReadResourceParams,
		*mcp.CompleteParams, *mcp.ListToolsParams, *mcp.ListPromptsParams, *mcp.ListResourcesParams,
		*mcp.ListResourceTemplatesParams:
		v := reflect.ValueOf(p)
		if v.IsNil() {
			return nil
		}
		cp := reflect.New(v.Elem().Type())
		cp.Elem().Set(v.Elem())
		return cp.Interface().(mcp.Params)
	}
	return nil
}

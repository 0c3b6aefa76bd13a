package probes

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// List names one of the four catalog lists of the MCP spec.
type List uint8

// The lists, in the order reports hold them.
const (
	Tools List = iota
	Resources
	Prompts
	ResourceTemplates

	numLists
)

var listNames = [numLists]struct{ name, method string }{
	Tools:             {"tools", "tools/list"},
	Resources:         {"resources", "resources/list"},
	Prompts:           {"prompts", "prompts/list"},
	ResourceTemplates: {"resource-templates", "resources/templates/list"},
}

// Lists returns the four lists in report order.
func Lists() []List { return []List{Tools, Resources, Prompts, ResourceTemplates} }

// String returns the list's short name, e.g. "resource-templates".
func (l List) String() string {
	if l < numLists {
		return listNames[l].name
	}
	return fmt.Sprintf("list(%d)", uint8(l))
}

// Method returns the JSON-RPC method that lists it, e.g. "tools/list".
func (l List) Method() string {
	if l < numLists {
		return listNames[l].method
	}
	return l.String()
}

// Lister lists one page of each catalog list: cursor "" for the first page,
// next "" after the last. Implementations return promptly once ctx is done
// and are safe for concurrent use (the lists run at once); an error may wrap
// the request's *classify.HTTPError, so the verdict rests on the answer.
type Lister interface {
	ListTools(ctx context.Context, cursor string) (items []*mcp.Tool, next string, err error)
	ListResources(ctx context.Context, cursor string) (items []*mcp.Resource, next string, err error)
	ListPrompts(ctx context.Context, cursor string) (items []*mcp.Prompt, next string, err error)
	ListResourceTemplates(ctx context.Context, cursor string) (items []*mcp.ResourceTemplate, next string, err error)
}

// SessionLister adapts a go-sdk client session to [Lister]. Errors are
// returned as go-sdk returns them. cs must not be nil. The result is safe for
// concurrent use, as *mcp.ClientSession is.
func SessionLister(cs *mcp.ClientSession) Lister { return sessionLister{cs} }

type sessionLister struct{ cs *mcp.ClientSession }

func (s sessionLister) ListTools(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
	return page(ctx, cursor, &mcp.ListToolsParams{Cursor: cursor}, s.cs.ListTools,
		func(r *mcp.ListToolsResult) ([]*mcp.Tool, string) { return r.Tools, r.NextCursor })
}

func (s sessionLister) ListResources(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
	return page(ctx, cursor, &mcp.ListResourcesParams{Cursor: cursor}, s.cs.ListResources,
		func(r *mcp.ListResourcesResult) ([]*mcp.Resource, string) { return r.Resources, r.NextCursor })
}

func (s sessionLister) ListPrompts(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
	return page(ctx, cursor, &mcp.ListPromptsParams{Cursor: cursor}, s.cs.ListPrompts,
		func(r *mcp.ListPromptsResult) ([]*mcp.Prompt, string) { return r.Prompts, r.NextCursor })
}

func (s sessionLister) ListResourceTemplates(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
	return page(ctx, cursor, &mcp.ListResourceTemplatesParams{Cursor: cursor}, s.cs.ListResourceTemplates,
		func(r *mcp.ListResourceTemplatesResult) ([]*mcp.ResourceTemplate, string) {
			return r.ResourceTemplates, r.NextCursor
		})
}

// page sends one list request; the first without params, as go-sdk's own.
func page[P, R, T any](ctx context.Context, cursor string, p *P, list func(context.Context, *P) (R, error), of func(R) ([]T, string)) ([]T, string, error) {
	if cursor == "" {
		p = nil
	}
	r, err := list(ctx, p)
	if err != nil {
		return nil, "", err
	}
	items, next := of(r)
	return items, next, nil
}

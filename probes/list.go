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

// Lister lists one page of each catalog list. cursor is "" for the first
// page; next is "" after the last one. Implementations must return promptly
// once ctx is done, and must be safe for concurrent use: [ProbeBlind] and
// [ListDeclared] call different methods at the same time. An error is
// classified as returned; an implementation may wrap it in the
// *classify.HTTPError of the request that failed, so that the verdict rests
// on the HTTP answer.
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

// sessionLister asks for a first page with nil params: go-sdk then sends no
// "params" member, where "{}" would cost it one more decode (a 32 KiB buffer
// per request in go-sdk v1.8.0) looking for a _meta that is not there.
type sessionLister struct{ cs *mcp.ClientSession }

func (s sessionLister) ListTools(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
	var p *mcp.ListToolsParams // nil on the first page: see sessionLister
	if cursor != "" {
		p = &mcp.ListToolsParams{Cursor: cursor}
	}
	r, err := s.cs.ListTools(ctx, p)
	if err != nil {
		return nil, "", err
	}
	return r.Tools, r.NextCursor, nil
}

func (s sessionLister) ListResources(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
	var p *mcp.ListResourcesParams // nil on the first page: see sessionLister
	if cursor != "" {
		p = &mcp.ListResourcesParams{Cursor: cursor}
	}
	r, err := s.cs.ListResources(ctx, p)
	if err != nil {
		return nil, "", err
	}
	return r.Resources, r.NextCursor, nil
}

func (s sessionLister) ListPrompts(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
	var p *mcp.ListPromptsParams // nil on the first page: see sessionLister
	if cursor != "" {
		p = &mcp.ListPromptsParams{Cursor: cursor}
	}
	r, err := s.cs.ListPrompts(ctx, p)
	if err != nil {
		return nil, "", err
	}
	return r.Prompts, r.NextCursor, nil
}

func (s sessionLister) ListResourceTemplates(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
	var p *mcp.ListResourceTemplatesParams // nil on the first page: see sessionLister
	if cursor != "" {
		p = &mcp.ListResourceTemplatesParams{Cursor: cursor}
	}
	r, err := s.cs.ListResourceTemplates(ctx, p)
	if err != nil {
		return nil, "", err
	}
	return r.ResourceTemplates, r.NextCursor, nil
}

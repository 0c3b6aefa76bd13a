package session

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/probes"
)

// ClientRequests are a go-sdk ClientSession's Requests but Alive, embedded
// by both transports' sessions.
type ClientRequests struct {
	probes.Lister
	CS *mcp.ClientSession
}

// NewClientRequests returns the requests of cs.
func NewClientRequests(cs *mcp.ClientSession) ClientRequests {
	return ClientRequests{Lister: probes.SessionLister(cs), CS: cs}
}

func (c ClientRequests) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return c.CS.CallTool(ctx, p)
}
func (c ClientRequests) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return c.CS.GetPrompt(ctx, p)
}
func (c ClientRequests) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return c.CS.ReadResource(ctx, p)
}
func (c ClientRequests) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return c.CS.Complete(ctx, p)
}
func (c ClientRequests) Subscribe(ctx context.Context, p *mcp.SubscribeParams) error {
	return c.CS.Subscribe(ctx, p)
}
func (c ClientRequests) Unsubscribe(ctx context.Context, p *mcp.UnsubscribeParams) error {
	return c.CS.Unsubscribe(ctx, p)
}

//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
func (c ClientRequests) SetLoggingLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) error {
	//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
	return c.CS.SetLoggingLevel(ctx, p)
}

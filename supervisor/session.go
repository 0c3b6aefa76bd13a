package supervisor

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/probes"
)

// session is one live MCP session as the supervisor uses it. The production
// implementation is a go-sdk ClientSession on mcpsup's wire transport; tests
// script their own.
type session interface {
	probes.Lister
	CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error)
	GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error)
	ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error)
	Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error)
	Subscribe(ctx context.Context, p *mcp.SubscribeParams) error
	Unsubscribe(ctx context.Context, p *mcp.UnsubscribeParams) error
	//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
	SetLoggingLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) error
	// Alive sends the era's cheapest request that proves the session
	// lives, for the keepalive and for verifying a session after a
	// transport failure: ping before 2026-07-28, server/discover from it
	// (that era has no ping).
	Alive(ctx context.Context) error

	// ID is the Mcp-Session-Id, "" for a sessionless server.
	ID() string
	// ProtocolVersion is the negotiated (or persisted) protocol version.
	ProtocolVersion() string
	// InitializeResult is what the server declared; nil after a blind
	// resume.
	InitializeResult() *mcp.InitializeResult
	// Wait blocks until the session ends and returns why.
	Wait() error
	// Close ends the session with DELETE; Detach without.
	Close() error
	Detach() error
}

// dialSpec is what one Dial or Attach needs besides the config.
type dialSpec struct {
	gen    uint64
	resume *ResumeState // Attach only
	// hooks into the supervisor, bound to this generation
	hooks *sessionHooks
}

// connector opens sessions.
type connector interface {
	// Dial opens a new session with a full handshake.
	Dial(ctx context.Context, spec dialSpec) (session, error)
	// Attach re-attaches the persisted session spec.resume without a
	// handshake on the wire.
	Attach(ctx context.Context, spec dialSpec) (session, error)
}

// sdkCalls are the host calls of a session on a go-sdk ClientSession, the
// same for both connectors.
type sdkCalls struct{ cs *mcp.ClientSession }

func (c sdkCalls) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return c.cs.CallTool(ctx, p)
}
func (c sdkCalls) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return c.cs.GetPrompt(ctx, p)
}
func (c sdkCalls) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return c.cs.ReadResource(ctx, p)
}
func (c sdkCalls) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return c.cs.Complete(ctx, p)
}
func (c sdkCalls) Subscribe(ctx context.Context, p *mcp.SubscribeParams) error {
	return c.cs.Subscribe(ctx, p)
}
func (c sdkCalls) Unsubscribe(ctx context.Context, p *mcp.UnsubscribeParams) error {
	return c.cs.Unsubscribe(ctx, p)
}

//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
func (c sdkCalls) SetLoggingLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) error {
	//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
	return c.cs.SetLoggingLevel(ctx, p)
}

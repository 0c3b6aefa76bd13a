// Package session is the seam between the supervisor and a transport
// (streamable HTTP, stdio): a live MCP session that reports its own end,
// once (first error wins), and the dialer that opens it.
package session

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/probes"
)

// Session is one live MCP session. It ends exactly once, by itself or by
// Close or Detach; the first cause wins. Safe for concurrent use.
type Session interface {
	Requests
	// Info is what the handshake (or the persisted state) established.
	Info() Info
	// Status says whether calls may go out now, with a channel closed at
	// the next change. Ended is final.
	Status() (Status, <-chan struct{})
	// Done is closed once the session has ended, before any call that saw
	// the cause returns.
	Done() <-chan struct{}
	// Err is nil until Done is closed; then ErrClosed or ErrDetached when
	// the host ended it, else the first cause.
	Err() error
	// Close ends the session (with DELETE on HTTP); Detach ends it without
	// telling the server, to resume it. Both wait for the session's
	// goroutines and are idempotent.
	Close() error
	Detach() error
}

// Endable is a Session that a rule outside its transport may end (see
// [Verify]), as every Dialer hands it out. A Session that embeds an [End]
// has Fail and AfterEnd.
type Endable interface {
	Session
	// Fail ends the session with err unless it has ended (the first cause
	// wins), Done closed before it returns, and reports whether this call
	// ended it.
	Fail(err error) bool
	// AfterEnd runs f once the session has ended (End.AfterEnd).
	AfterEnd(f func())
}

// Requests are the MCP requests the supervisor sends on a session.
type Requests interface {
	probes.Lister
	CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error)
	GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error)
	ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error)
	Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error)
	Subscribe(ctx context.Context, p *mcp.SubscribeParams) error
	Unsubscribe(ctx context.Context, p *mcp.UnsubscribeParams) error
	//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers
	SetLoggingLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) error
	// Alive sends the era's cheapest proof of life: ping before 2026-07-28,
	// server/discover from it.
	Alive(ctx context.Context) error
}

// Status is whether a session takes calls now.
type Status uint8

const (
	// Live: calls go out.
	Live Status = iota
	// Verifying: one Alive runs after an unanswered request ([Verify]);
	// calls wait for it.
	Verifying
	// Ended: Done is closed.
	Ended
)

var statusNames = [...]string{Live: "live", Verifying: "verifying", Ended: "ended"}

// String returns "live", "verifying" or "ended".
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Info is what a session's handshake, or its persisted state, established.
type Info struct {
	// ID is the Mcp-Session-Id; "" for a sessionless server and on stdio.
	ID string
	// ProtocolVersion is the negotiated (or persisted) protocol version.
	ProtocolVersion string
	// Initialize is what the server declared; nil after a blind resume.
	Initialize *mcp.InitializeResult
}

// Resume re-attaches a session without a handshake; part of the persisted
// resume state (its JSON names are stable).
type Resume struct {
	// SessionID is the Mcp-Session-Id; "" for a sessionless server (a
	// 2025-era server that issued none, or any 2026-07-28 server).
	SessionID string `json:"session_id,omitempty"`
	// ProtocolVersion is the negotiated protocol version, e.g. "2025-11-25".
	ProtocolVersion string `json:"protocol_version"`
	// InitializeResult is what the server declared (the InitializeResult, or
	// a 2026-07-28 server's discovery result); nil when unknown, which makes
	// a resume blind.
	InitializeResult *mcp.InitializeResult `json:"initialize_result,omitempty"`
}

// Dialer opens one supervisor's sessions on one transport and keeps what
// outlives a session (an era, a protocol version). Safe for concurrent use.
type Dialer interface {
	// Dial opens a new session with a full handshake, bounded by ctx.
	Dial(ctx context.Context, spec Spec) (Endable, error)
	// Attach re-attaches spec.Resume without a handshake on the wire;
	// ErrNoResume on a transport that has nothing to resume.
	Attach(ctx context.Context, spec Spec) (Endable, error)
}

// Spec is what one Dial or Attach needs from the supervisor.
type Spec struct {
	// Generation numbers the supervisor's sessions; facts carry it.
	Generation uint64
	// Resume is the session Attach re-attaches; nil for Dial.
	Resume *Resume
	// Client builds the session's go-sdk client with facts, the transport's
	// middleware putting its facts on every request's error, innermost.
	Client func(facts mcp.Middleware) *mcp.Client
	// Observe receives the transport's facts; it must not block. nil: none.
	Observe func(Fact)
}

// DefaultMaxResponsesInFlight bounds, on every transport, the client's
// responses to the server's requests written at once; one past it is
// dropped (ResponseDropped).
const DefaultMaxResponsesInFlight = 16

// Errors a Session ends with when the host ended it.
var (
	ErrClosed   = errors.New("mcpsup/session: closed")
	ErrDetached = errors.New("mcpsup/session: detached")
	// ErrNoResume: the transport has no session to re-attach (stdio).
	ErrNoResume = errors.New("mcpsup/session: nothing to resume on this transport")
)

package httpsession

import (
	"cmp"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC methods of the handshake.
const (
	methodInitialize  = "initialize"
	methodInitialized = "notifications/initialized"
	methodDiscover    = "server/discover"
)

// handshake is what the conn answers locally while resuming.
type handshake struct {
	protocolVersion string
	sessionID       string
	result          *mcp.InitializeResult // the persisted one (a 2026-07-28 server's discovery result); nil: a blind resume
}

func initializeResult(h *handshake) any {
	if h.result == nil {
		return map[string]any{"protocolVersion": h.protocolVersion, "capabilities": map[string]any{}}
	}
	r := *h.result
	r.ProtocolVersion = h.protocolVersion
	r.Capabilities = cmp.Or(r.Capabilities, &mcp.ServerCapabilities{})
	return &r
}

func discoverResult(h *handshake) any {
	r := mcp.DiscoverResult{SupportedVersions: []string{h.protocolVersion},
		Capabilities: cmp.Or(h.result.Capabilities, &mcp.ServerCapabilities{}), Instructions: h.result.Instructions}
	if h.result.ServerInfo != nil {
		r.Meta = mcp.Meta{mcp.MetaKeyServerInfo: h.result.ServerInfo}
	}
	return &r
}

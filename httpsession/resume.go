package httpsession

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC methods of the handshake.
const (
	methodInitialize  = "initialize"
	methodInitialized = "notifications/initialized"
	methodDiscover    = "server/discover"
)

// handshake is what the Transport answers locally while resuming.
type handshake struct {
	protocolVersion string
	sessionID       string
	// result is the persisted InitializeResult (the discovery result of a
	// 2026-07-28 server), nil for a blind resume.
	result *mcp.InitializeResult
	// answered reports that initialize was answered and
	// notifications/initialized is still expected.
	answered bool
}

// setResume makes the Transport answer the next handshake locally.
func (t *Transport) setResume(h *handshake) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.resume = h
	t.idShift.Store(newIDShift()) // the server's session saw go-sdk's ids before (idshift.go)
}

// answerHandshake answers the handshake requests of a resume: `initialize`
// with a synthesized InitializeResult and the persisted Mcp-Session-Id,
// `notifications/initialized` with 202, and `server/discover` with the
// persisted discovery result. go-sdk then adopts the session id, sends it
// and Mcp-Protocol-Version on every request, and opens the standalone
// stream; no handshake request reaches the server (DESIGN.md section 7,
// "Resume"; docs/decisions/0001).
func (t *Transport) answerHandshake(req *http.Request, x *Exchange) (*http.Response, bool) {
	switch x.Method {
	case methodInitialize, methodInitialized, methodDiscover:
	default:
		return nil, false // not a handshake request: the calls take no lock
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.resume
	if h == nil {
		return nil, false
	}
	var body []byte
	header := http.Header{}
	switch {
	case x.Method == methodInitialize && x.RequestID != "" && !h.answered:
		body = rpcResult(x.RequestID, initializeResult(h))
		if h.sessionID != "" {
			header.Set(HeaderSessionID, h.sessionID)
		}
		h.answered = true
	case x.Method == methodInitialized && h.answered:
		t.resume = nil
		x.Local, x.Status, x.Duration = true, http.StatusAccepted, 0
		return localResponse(req, http.StatusAccepted, "", nil, nil), true
	case x.Method == methodDiscover && x.RequestID != "" && h.result != nil:
		body = rpcResult(x.RequestID, discoverResult(h))
		t.resume = nil
	default:
		return nil, false
	}
	x.Local, x.Status, x.ContentType = true, http.StatusOK, "application/json"
	t.handshook = true
	t.sessionID = h.sessionID
	return localResponse(req, http.StatusOK, "application/json", header, body), true
}

func initializeResult(h *handshake) any {
	if h.result == nil {
		return map[string]any{"protocolVersion": h.protocolVersion, "capabilities": map[string]any{}}
	}
	r := *h.result
	r.ProtocolVersion = h.protocolVersion
	if r.Capabilities == nil {
		r.Capabilities = &mcp.ServerCapabilities{}
	}
	return &r
}

func discoverResult(h *handshake) any {
	caps := h.result.Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	r := mcp.DiscoverResult{
		SupportedVersions: []string{h.protocolVersion},
		Capabilities:      caps,
		Instructions:      h.result.Instructions,
	}
	if h.result.ServerInfo != nil {
		r.Meta = mcp.Meta{mcp.MetaKeyServerInfo: h.result.ServerInfo}
	}
	return &r
}

func rpcResult(id string, result any) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", json.RawMessage(id), result})
	return b
}

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/supervisor"
)

// memServer is an MCP server (2025-11-25, one tool) as an
// http.RoundTripper: no network, no goroutines, no go-sdk server. It
// answers tools/call with an event stream of one response event, as
// go-sdk's server does, initialize and tools/list with JSON, notifications
// with 202, and the standalone GET with 405. A call through it costs the
// client alone, so the clients' differences are their own work.
type memServer struct{}

func (memServer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	switch req.Method {
	case http.MethodGet:
		return memAnswer(req, http.StatusMethodNotAllowed, "", nil), nil
	case http.MethodDelete:
		return memAnswer(req, http.StatusOK, "", nil), nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	if len(m.ID) == 0 {
		return memAnswer(req, http.StatusAccepted, "", nil), nil
	}
	// reply is the response to m carrying member: "result" or "error".
	reply := func(member, value string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"` + member + `":` + value + `}`)
	}
	switch m.Method {
	case "initialize":
		resp := memAnswer(req, http.StatusOK, "application/json", reply("result", `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"mem","version":"0"}}`))
		resp.Header.Set("Mcp-Session-Id", "MEMSESSION1")
		return resp, nil
	case "tools/list":
		return memAnswer(req, http.StatusOK, "application/json", reply("result", `{"tools":[{"name":"record","inputSchema":{"type":"object"}}]}`)), nil
	case "tools/call":
		event := append([]byte("event: message\nid: 0_"+strconv.Itoa(len(body))+"\ndata: "), reply("result", `{"content":[{"type":"text","text":"x"}]}`)...)
		return memAnswer(req, http.StatusOK, "text/event-stream", append(event, "\n\n"...)), nil
	}
	return memAnswer(req, http.StatusOK, "application/json", reply("error", `{"code":-32601,"message":"method not found"}`)), nil
}

func memAnswer(req *http.Request, status int, contentType string, body []byte) *http.Response {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	n := int64(len(body))
	if contentType == "text/event-stream" {
		n = -1
	}
	return &http.Response{StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: n, Request: req}
}

// memClients are the three clients of BenchmarkCallToolInMemory on one
// memServer, standalone stream off in all: a bare go-sdk session, a go-sdk
// session on mcpsup's Transport alone and a supervisor. They are closed
// with tb.
func memClients(ctx context.Context, tb testing.TB) map[Client]client {
	hc := &http.Client{Transport: memServer{}}
	const endpoint = "http://127.0.0.1:1/mcp" // never dialed
	sess, err := dialSDK(ctx, endpoint, hc, true)
	require.NoError(tb, err)
	s, err := httpsession.Open(ctx, httpsession.Options{Endpoint: endpoint, HTTPClient: hc, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
	require.NoError(tb, err)
	sup, err := startSupervisor(ctx, endpoint, hc, supervisor.Config{Name: "bench", Era: supervisor.Era2025, Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}})
	require.NoError(tb, err)
	clients := map[Client]client{
		BareSDK:    &bareClient{sess: sess},
		memWire:    &wireClient{bareClient: bareClient{sess: s.ClientSession()}, s: s},
		Supervised: &supervisedClient{sup: sup},
	}
	for _, c := range clients {
		tb.Cleanup(c.close)
	}
	return clients
}

// memWire names the wire-only client of memClients.
const memWire Client = "mcpsup wire layer alone"

// memServer answers what each client sends to call a tool, so the
// benchmark times calls, not failures.
func TestMemServerServesEveryClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, c := range memClients(ctx, t) {
		require.NoError(t, c.call(ctx, "overhead"), name)
	}
}

// BenchmarkCallToolInMemory is one tools/call against memServer through
// each of memClients: the client's own work per call (time and
// allocations, no server, no network).
func BenchmarkCallToolInMemory(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	clients := memClients(ctx, b)
	for _, name := range []Client{BareSDK, memWire, Supervised} {
		b.Run(string(name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := clients[name].call(ctx, "overhead"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

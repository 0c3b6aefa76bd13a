package httpsession_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
)

// fuzzAnswer is one fuzzed answer to a tools/call.
type fuzzAnswer struct {
	status      int
	contentType string
	gzip        bool
	sessionID   string // Mcp-Session-Id on the answer, "" for none
	body        []byte // "$ID" is replaced by the call's id
}

// fakeServer answers the handshake and good calls itself, and the first
// tools/call with the fuzzed answer. It counts handshakes and DELETEs.
type fakeServer struct {
	answer     fuzzAnswer
	answered   atomic.Bool
	handshakes atomic.Int64
	deletes    atomic.Int64
}

func (f *fakeServer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	switch r.Method {
	case http.MethodDelete:
		f.deletes.Add(1)
		return fakeResponse(r, 204, nil, nil), nil
	case http.MethodGet:
		return fakeResponse(r, 405, nil, nil), nil
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	readFakeRequest(r, &msg)
	jsonHdr := http.Header{"Content-Type": {"application/json"}}
	switch {
	case msg.Method == "initialize":
		f.handshakes.Add(1)
		return handshakeAnswer(r, msg.ID, http.Header{httpsession.HeaderSessionID: {"fuzz-session"}}, "fake"), nil
	case len(msg.ID) == 0:
		return fakeResponse(r, 202, nil, nil), nil
	case msg.Method == "tools/call" && !f.answered.Swap(true):
		a := f.answer
		h := http.Header{}
		if a.contentType != "" {
			h.Set("Content-Type", a.contentType)
		}
		if a.sessionID != "" {
			h[httpsession.HeaderSessionID] = []string{a.sessionID}
		}
		b := bytes.ReplaceAll(a.body, []byte("$ID"), msg.ID)
		if a.gzip {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			_, _ = zw.Write(b)
			_ = zw.Close()
			b = buf.Bytes()
			h.Set("Content-Encoding", "gzip")
		}
		return fakeResponse(r, a.status, h, b), nil
	default:
		return fakeResponse(r, 200, jsonHdr, []byte(`{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"content":[{"type":"text","text":"ok"}]}}`)), nil
	}
}

// openFaked opens a 2025-11-25 session with the stream off on the fake
// server rt; the caller closes it.
func openFaked(t *testing.T, ctx context.Context, rt http.RoundTripper, cfg httpsession.Config) *httpsession.Session {
	t.Helper()
	sess, err := httpsession.Open(ctx, httpsession.Options{
		Endpoint:   "http://mcp.invalid/mcp",
		HTTPClient: &http.Client{Transport: rt},
		Era:        httpsession.Era2025,
		Stream:     httpsession.StreamOff,
		Wire:       cfg,
	})
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return sess
}

// readFakeRequest decodes the JSON-RPC body of a fake server's request
// into v; a body that does not decode leaves v as it was.
func readFakeRequest(r *http.Request, v any) {
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, v)
}

// handshakeAnswer is a fake server's 200 application/json answer to
// initialize id, a 2025-11-25 server named name with tools; h holds more
// headers (a session id), or is nil.
func handshakeAnswer(r *http.Request, id json.RawMessage, h http.Header, name string) *http.Response {
	hh := http.Header{"Content-Type": {"application/json"}}
	for k, v := range h {
		hh[k] = v
	}
	return fakeResponse(r, 200, hh, []byte(`{"jsonrpc":"2.0","id":`+string(id)+
		`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"`+name+`","version":"v0"}}}`))
}

func fakeResponse(r *http.Request, status int, h http.Header, body []byte) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{
		StatusCode: status, Status: strconv.Itoa(status) + " " + http.StatusText(status),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r,
	}
}

var fuzzContentTypes = []string{"application/json", "text/event-stream", "text/html", "", "application/json; charset=utf-8", "text/event-stream;charset=utf-8"}

// FuzzAnswerPath feeds any answer (status, headers, body bytes, SSE framing,
// gzip) to a tools/call of a real go-sdk ClientSession on the Transport: no
// panic, no hang, and the session serves the next call unless the verdict
// is one that ends a session (session-expired).
func FuzzAnswerPath(f *testing.F) {
	seeds := []struct {
		status int
		ct     uint8
		gz     bool
		sid    string
		body   string
	}{
		{200, 0, false, "", `{"jsonrpc":"2.0","id":$ID,"result":{"content":[]}}`},
		{200, 0, false, "", `{"jsonrpc":"2.0","id":999,"result":{}}`},
		{200, 0, false, "", `{"jsonrpc":"2.0","id":$ID,"result":null}`},
		{200, 0, false, "", `{"jsonrpc":"2.0","id":$ID}`},
		{200, 0, true, "", `{"jsonrpc":"2.0","id":$ID,"result":{"content":[]}}`},
		{200, 1, false, "", "data: {\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{}}\n\n"},
		{200, 1, false, "", "id: 1\nretry: 5\ndata:\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"},
		{200, 1, false, "", "garbage\n\n"},
		{200, 1, true, "", "data: {\"jsonrpc\":\"2.0\",\"id\":$ID,\"error\":{\"code\":1,\"message\":\"x\"}}\r\n\r\n"},
		{400, 0, false, "", `{"jsonrpc":"2.0","id":$ID,"error":{"code":-32601,"message":"nf"}}`},
		{400, 0, false, "", `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"No valid session ID"}}`},
		{404, 2, false, "", "<html>gone</html>"},
		{302, 3, false, "", ""},
		{200, 0, false, "other-session", `{"jsonrpc":"2.0","id":$ID,"result":{}}`},
		{202, 3, false, "", ""},
		{503, 2, true, "", "down"},
		{200, 1, false, "", "id: 3\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"},
	}
	for _, s := range seeds {
		f.Add(s.status, s.ct, s.gz, s.sid, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, ct uint8, gz bool, sid string, body []byte) {
		if status < 200 || status > 599 {
			status = 200 + (status%400+400)%400
		}
		srv := &fakeServer{answer: fuzzAnswer{
			status: status, contentType: fuzzContentTypes[int(ct)%len(fuzzContentTypes)],
			gzip: gz, sessionID: sid, body: body,
		}}
		clock := clockwork.NewFakeClock()
		advance(t, clock) // resumption delays take no time
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sess := openFaked(t, ctx, srv, httpsession.Config{Clock: clock, MaxJSONBody: 4 << 10, MaxErrorBody: 1 << 10, MaxSSEEvent: 4 << 10})
		defer sess.Close()
		cs := sess.ClientSession()
		callCtx := httpsession.WithExchange(ctx)
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "t"})
		if ctx.Err() != nil {
			t.Fatalf("the call hung: %v", err)
		}
		v := classify.Classify(context.Background(), httpsession.Annotate(callCtx, err))
		if err != nil && (v.Class == classify.Transport || v.Class == classify.Unknown || v.Class == classify.Timeout) {
			t.Fatalf("an answer classified %s: %v", v.Class, err)
		}
		if v.Class == classify.SessionExpired {
			return // the answer said the session is gone: go-sdk may end it
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t"}); err != nil {
			t.Fatalf("the session was lost after a %s answer: %v", v.Class, err)
		}
		if n := srv.handshakes.Load(); n != 1 {
			t.Fatalf("%d handshakes", n)
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatal("hung")
		}
	})
}

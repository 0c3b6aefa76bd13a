//go:build unix

package interop

import (
	"context"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
)

// The exact bodies server-everything answers with (HTTP 400, JSON). Neither
// error is tied to a request: the first has no id member at all (the server
// copies req.body.id, and no body parser runs), the second a null id.
const (
	noValidSessionBody  = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`
	notInitializedBody  = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`
	secondStreamBody    = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Conflict: Only one SSE stream is allowed per session"},"id":null}`
	toolsListRequest    = `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
	discoverRequest     = `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}}`
	staleSessionID      = "0b7e6c1e-0000-4000-8000-000000000000"
	negotiatedByDefault = "2025-11-25"
)

// waitBound bounds waits for go-sdk to notice a dead session: its standalone
// stream reconnects after 1-2 s (reconnectInitialDelay plus jitter).
const waitBound = 10 * time.Second

// TestEverything pins what the reference server does on a live server; the
// restart facts are in TestEverythingRestart.
func TestEverything(t *testing.T) {
	s := startEverything(t)

	t.Run("default go-sdk client lists and calls tools", func(t *testing.T) {
		hc, rec := newHTTPClient(t)
		cs := connectSDK(t, s.URL(), hc, sdkOptions{})
		ctx := context.Background()

		// go-sdk v1.8.0 asks for 2026-07-28 with server/discover first; the
		// server answers 400 (see the discover subtest), and go-sdk falls
		// back to initialize with 2025-11-25, which the server accepts.
		require.Equal(t, negotiatedByDefault, cs.InitializeResult().ProtocolVersion)
		require.NotEmpty(t, cs.ID(), "a 2025-era stateful server issues Mcp-Session-Id")
		handshake := rec.exchanges()
		require.GreaterOrEqual(t, len(handshake), 2)
		assert.Equal(t, exchange{Verb: "POST", Method: "server/discover", Status: 400}, handshake[0])
		assert.Equal(t, exchange{Verb: "POST", Method: "initialize", Status: 200}, handshake[1])

		tools, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		require.NotEmpty(t, tools.Tools)
		names := make([]string, 0, len(tools.Tools))
		for _, tool := range tools.Tools {
			names = append(names, tool.Name)
		}
		require.Contains(t, names, "echo")
		t.Logf("%d tools: %v", len(names), names)

		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
		require.NoError(t, err)
		require.False(t, res.IsError)
		require.Len(t, res.Content, 1)
		text, ok := res.Content[0].(*mcp.TextContent)
		require.True(t, ok, "content is %T", res.Content[0])
		require.Equal(t, "Echo: hello", text.Text)
	})

	t.Run("a 2025 protocol version skips discover", func(t *testing.T) {
		hc, rec := newHTTPClient(t)
		cs := connectSDK(t, s.URL(), hc, sdkOptions{ProtocolVersion: negotiatedByDefault, NoStandaloneStream: true})
		require.Equal(t, negotiatedByDefault, cs.InitializeResult().ProtocolVersion)
		exs := rec.exchanges()
		require.NotEmpty(t, exs)
		require.Equal(t, exchange{Verb: "POST", Method: "initialize", Status: 200}, exs[0])
		for _, ex := range exs {
			require.NotEqual(t, "server/discover", ex.Method)
		}
	})

	t.Run("discover is not supported", func(t *testing.T) {
		hc, _ := newHTTPClient(t)

		// Without a session: the request reaches a fresh, uninitialized
		// transport, which rejects it with 400 and a null-id -32000.
		got := postRaw(t, hc, s.URL(), "", discoverRequest)
		require.Equal(t, http.StatusBadRequest, got.Status)
		require.Equal(t, "application/json", got.ContentType)
		require.Equal(t, notInitializedBody, string(got.Body))
		require.Empty(t, got.SessionID)
		// No session id was sent, so this is no session expiry: an
		// application-class answer.
		v := classify.Classify(context.Background(), httpErrorFor(t, "server/discover", `2`, false, got))
		require.Equal(t, classify.Application, v.Class, "%v", v)

		// Inside a session: a plain JSON-RPC -32601 answering the request.
		sid := initializeRaw(t, hc, s.URL())
		got = postRaw(t, hc, s.URL(), sid, discoverRequest)
		require.Equal(t, http.StatusOK, got.Status)
		require.Equal(t, "text/event-stream", got.ContentType)
		require.JSONEq(t, `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}`, string(got.Body))
	})

	t.Run("unknown session id is a no-id 400 and session-expired", func(t *testing.T) {
		hc, _ := newHTTPClient(t)
		got := postRaw(t, hc, s.URL(), staleSessionID, toolsListRequest)
		requireNoValidSession(t, got)

		v := classify.Classify(context.Background(), httpErrorFor(t, "tools/list", `7`, true, got))
		require.Equal(t, classify.SessionExpired, v.Class, "%v", v)
		require.Equal(t, 400, v.HTTPStatus)
		require.Equal(t, classify.RPCError{Present: true, Code: -32000, Message: "Bad Request: No valid session ID provided"}, v.RPC)
		require.True(t, v.Reconnects())

		// GET and DELETE with an unknown session get the same answer.
		for _, verb := range []string{http.MethodGet, http.MethodDelete} {
			resp := doRaw(context.Background(), t, hc, verb, s.URL(), staleSessionID)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, verb)
			require.Equal(t, noValidSessionBody, string(body), verb)
		}
	})

	t.Run("second standalone GET gets 409", func(t *testing.T) {
		hc, _ := newHTTPClient(t)
		sid := initializeRaw(t, hc, s.URL())

		ctx, cancel := context.WithCancel(context.Background())
		first := doRaw(ctx, t, hc, http.MethodGet, s.URL(), sid)
		t.Cleanup(func() {
			cancel()
			_ = first.Body.Close()
		})
		require.Equal(t, http.StatusOK, first.StatusCode)
		require.Equal(t, "text/event-stream", mediaType(first.Header.Get("Content-Type")))

		second := doRaw(context.Background(), t, hc, http.MethodGet, s.URL(), sid)
		body, err := io.ReadAll(second.Body)
		require.NoError(t, err)
		require.NoError(t, second.Body.Close())
		require.Equal(t, http.StatusConflict, second.StatusCode)
		require.Equal(t, "application/json", mediaType(second.Header.Get("Content-Type")))
		require.Equal(t, secondStreamBody, string(body))
	})

	t.Run("standalone stream events carry ids", func(t *testing.T) {
		hc, _ := newHTTPClient(t)
		sid := initializeRaw(t, hc, s.URL())

		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		stream := doRaw(ctx, t, hc, http.MethodGet, s.URL(), sid)
		t.Cleanup(func() {
			cancel()
			_ = stream.Body.Close()
		})
		require.Equal(t, http.StatusOK, stream.StatusCode)

		// The tool starts logging for the session and sends the first
		// notifications/message at once; it belongs to no request, so it
		// goes out on the standalone stream.
		got := postRaw(t, hc, s.URL(), sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"toggle-simulated-logging","arguments":{}}}`)
		require.Equal(t, http.StatusOK, got.Status, "%s", got.Body)

		id, data := firstEvent(t, stream.Body)
		require.JSONEq(t, `"notifications/message"`, string(decodeObject(t, data)["method"]), "%s", data)
		require.NotEmpty(t, id, "the event has an id a re-dial can send as Last-Event-ID: %s", data)
	})
}

// TestEverythingRestart kills the server and starts it again on the same
// port: every session of the old process is unknown to the new one.
func TestEverythingRestart(t *testing.T) {
	s := startEverything(t)
	ctx := context.Background()

	rawHC, _ := newHTTPClient(t)
	rawSession := initializeRaw(t, rawHC, s.URL())
	require.Equal(t, http.StatusOK, postRaw(t, rawHC, s.URL(), rawSession, toolsListRequest).Status)

	// Two go-sdk sessions, to see each way go-sdk learns of the restart:
	// by a call (standalone stream off) and by its standalone stream alone.
	callHC, callRec := newHTTPClient(t)
	byCall := connectSDK(t, s.URL(), callHC, sdkOptions{NoStandaloneStream: true})
	streamHC, streamRec := newHTTPClient(t)
	byStream := connectSDK(t, s.URL(), streamHC, sdkOptions{})
	_, err := byCall.ListTools(ctx, nil)
	require.NoError(t, err)
	byCallDone, byStreamDone := waitAsync(byCall), waitAsync(byStream)
	callBefore, streamBefore := len(callRec.exchanges()), len(streamRec.exchanges())

	oldPID := s.proc.cmd.Process.Pid
	s.Restart()
	require.NotEqual(t, oldPID, s.proc.cmd.Process.Pid)
	require.ErrorIs(t, syscall.Kill(-oldPID, 0), syscall.ESRCH, "the old process group is gone")

	t.Run("old session id gets the unknown-session 400", func(t *testing.T) {
		got := postRaw(t, rawHC, s.URL(), rawSession, toolsListRequest)
		requireNoValidSession(t, got)
		v := classify.Classify(ctx, httpErrorFor(t, "tools/list", `7`, true, got))
		require.Equal(t, classify.SessionExpired, v.Class, "%v", v)
	})

	t.Run("go-sdk notices by the next call", func(t *testing.T) {
		// Recorded with go-sdk v1.8.0: the call's POST gets the 400, whose
		// body has no id, so go-sdk cannot tie it to the call and reports
		// only the status text: `calling "tools/list": sending "tools/list":
		// Bad Request`. The connection fails and closes itself: since the
		// failure is not ErrSessionMissing, closing sends a DELETE with the
		// dead session id (answered 400) before Wait returns `sending
		// "tools/list": Bad Request`. Later calls fail locally with
		// `connection closed: calling "tools/list": client is closing: ...`,
		// and go-sdk opens no new session by itself.
		_, err := byCall.ListTools(ctx, nil)
		require.Error(t, err)
		requireNoWireFacts(t, err)
		requireDone(t, byCallDone)

		_, err = byCall.ListTools(ctx, nil)
		require.ErrorIs(t, err, mcp.ErrConnectionClosed)
		after := callRec.exchanges()[callBefore:]
		require.Equal(t, []exchange{
			{Verb: "POST", Method: "tools/list", Session: true, Status: 400},
			{Verb: "DELETE", Session: true, Status: 400},
		}, after, "one POST answered 400, the closing DELETE; the second call sent nothing; no new session")
	})

	t.Run("go-sdk notices by the standalone stream", func(t *testing.T) {
		// Recorded with go-sdk v1.8.0: the standalone GET breaks when the
		// process dies; go-sdk reconnects it 1-2 s later (retrying while the
		// port is closed), gets the 400, and fails the connection, which
		// closes itself with a DELETE (answered 400): Wait returns
		// `standalone SSE stream: Bad Request`, with no call made.
		requireDone(t, byStreamDone)
		after := streamRec.exchanges()[streamBefore:]
		require.GreaterOrEqual(t, len(after), 2, "%+v", after)
		gets, last := after[:len(after)-2], after[len(after)-2:]
		for _, ex := range gets {
			require.Equal(t, exchange{Verb: "GET", Session: true}, ex, "only refused GETs before the answered one: %+v", after)
		}
		require.Equal(t, []exchange{
			{Verb: "GET", Session: true, Status: 400},
			{Verb: "DELETE", Session: true, Status: 400},
		}, last, "%+v", after)
	})
}

// requireNoValidSession asserts server-everything's unknown-session answer:
// HTTP 400, JSON, -32000 "Bad Request: No valid session ID provided", and no
// id member at all.
func requireNoValidSession(t *testing.T, got rawResponse) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, got.Status)
	require.Equal(t, "application/json", got.ContentType)
	require.Equal(t, noValidSessionBody, string(got.Body))
	require.NotContains(t, decodeObject(t, got.Body), "id")
	parsed, ok := classify.ParseRPCError(got.Body)
	require.True(t, ok)
	require.Equal(t, "", parsed.ID, "no id member")
	require.False(t, parsed.HasID)
}

// httpErrorFor builds the facts the wire layer records for one raw exchange.
func httpErrorFor(t *testing.T, method, requestID string, sessionSent bool, got rawResponse) *classify.HTTPError {
	t.Helper()
	parsed, ok := classify.ParseRPCError(got.Body)
	require.True(t, ok, "body %s", got.Body)
	return &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: method, RequestID: requestID, Status: got.Status, ContentType: got.ContentType, SessionIDSent: sessionSent, RPC: parsed.RPCError, BodyRPCID: parsed.ID, Body: string(got.Body)}}
}

// requireNoWireFacts asserts that go-sdk's own error does not carry the
// facts of the 400 (status, JSON-RPC code): only a wire layer that records
// them lets classify see a session expiry.
func requireNoWireFacts(t *testing.T, err error) {
	t.Helper()
	v := classify.Classify(context.Background(), err)
	require.Zero(t, v.HTTPStatus, "%v", v)
	require.False(t, v.RPC.Present, "%v", v)
	require.NotEqual(t, classify.SessionExpired, v.Class, "%v", v)
	t.Logf("go-sdk error %q classifies alone as %v", err, v)
}

// waitAsync returns a channel that receives cs.Wait's result.
func waitAsync(cs *mcp.ClientSession) <-chan error {
	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	return done
}

// requireDone waits, bounded, for a session's Wait to return an error.
func requireDone(t *testing.T, done <-chan error) {
	t.Helper()
	timer := time.NewTimer(waitBound)
	defer timer.Stop()
	select {
	case err := <-done:
		require.Error(t, err, "the session ended without an error")
		requireNoWireFacts(t, err)
	case <-timer.C:
		t.Fatalf("the go-sdk session did not end within %v", waitBound)
	}
}

// doRaw sends a bodiless request (GET or DELETE) with sessionID.
func doRaw(ctx context.Context, t *testing.T, hc *http.Client, verb, url, sessionID string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, verb, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", rawProtocolVersion)
	req.Header.Set("Mcp-Session-Id", sessionID)
	resp, err := hc.Do(req)
	require.NoError(t, err, "%s %s", verb, url)
	return resp
}

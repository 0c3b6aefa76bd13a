package mcptest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const toolsListBody = `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`

func TestRespondActionsWriteExactlyTheConfiguredResponse(t *testing.T) {
	tests := []struct {
		name       string
		action     Action
		wantStatus int
		wantHeader http.Header
		wantBody   string
	}{
		{
			name:       "raw",
			action:     Respond(418, http.Header{"X-Fault": {"a", "b"}, "Content-Type": {"application/octet-stream"}}, []byte{0, 1, 2}),
			wantStatus: 418,
			wantHeader: http.Header{"X-Fault": {"a", "b"}, "Content-Type": {"application/octet-stream"}},
			wantBody:   "\x00\x01\x02",
		},
		{
			name:       "raw without content type",
			action:     Respond(http.StatusBadGateway, nil, []byte("<html>bad gateway</html>")),
			wantStatus: http.StatusBadGateway,
			wantHeader: http.Header{"Content-Type": nil},
			wantBody:   "<html>bad gateway</html>",
		},
		{
			name:       "json-rpc error with the request's id",
			action:     JSONRPCError(http.StatusBadRequest, RequestID, -32601, "Method not found"),
			wantStatus: http.StatusBadRequest,
			wantHeader: http.Header{"Content-Type": {"application/json"}},
			wantBody:   `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}`,
		},
		{
			name:       "json-rpc error with a null id",
			action:     JSONRPCError(http.StatusBadRequest, NullID, -32000, StaleSessionMessage),
			wantStatus: http.StatusBadRequest,
			wantHeader: http.Header{"Content-Type": {"application/json"}},
			wantBody:   `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`,
		},
		{
			name:       "json-rpc error without id",
			action:     JSONRPCError(http.StatusBadRequest, NoID, -32000, StaleSessionMessage),
			wantStatus: http.StatusBadRequest,
			wantHeader: http.Header{"Content-Type": {"application/json"}},
			wantBody:   `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`,
		},
		{
			name:       "plain text",
			action:     PlainText(http.StatusRequestEntityTooLarge, "too large"),
			wantStatus: http.StatusRequestEntityTooLarge,
			wantHeader: http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
			wantBody:   "too large",
		},
		{
			name:       "html",
			action:     HTML(http.StatusOK, "<p>login</p>"),
			wantStatus: http.StatusOK,
			wantHeader: http.Header{"Content-Type": {"text/html; charset=utf-8"}},
			wantBody:   "<p>login</p>",
		},
		{
			name:       "empty",
			action:     Empty(http.StatusServiceUnavailable),
			wantStatus: http.StatusServiceUnavailable,
			wantHeader: http.Header{"Content-Type": nil, "Content-Length": {"0"}},
			wantBody:   "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, Options{})
			id := s.Gateway().Add(Rule{Match: Match{Method: "tools/list"}, Action: tt.action})

			resp, body := post(t, s, "", toolsListBody)

			assert.Equal(t, tt.wantStatus, resp.StatusCode)
			for k, v := range tt.wantHeader {
				assert.Equal(t, v, resp.Header.Values(k), "header %s", k)
			}
			assert.Equal(t, tt.wantBody, string(body))
			e := lastDone(t, s.Log())
			assert.Equal(t, Entry{Seq: 1, Verb: "POST", Method: "tools/list", ID: "7", Status: tt.wantStatus, By: ByGateway, Rule: id, Done: true}, e)
			assert.Equal(t, 1, s.Gateway().Fired(id))
		})
	}
}

func TestJSONRPCErrorOnANotificationHasANullID(t *testing.T) {
	s := startServer(t, Options{})
	s.Gateway().Add(Rule{Action: JSONRPCError(http.StatusBadRequest, RequestID, -32600, "Invalid Request")})

	_, body := post(t, s, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`, string(body))
	assert.Equal(t, "", lastEntry(t, s.Log()).ID)
}

func TestTemplatesPresetReachesTheGoSDKClientAsMethodNotFound(t *testing.T) {
	s := startServer(t, Options{Resources: 1, Templates: 1})
	s.Gateway().Add(TemplatesMethodNotFound())
	cs := connect(t, s, "2025-11-25", nil)
	ctx := testContext(t)

	_, err := cs.ListResourceTemplates(ctx, nil)

	var jerr *jsonrpc.Error
	require.ErrorAs(t, err, &jerr)
	assert.Equal(t, int64(-32601), jerr.Code)
	e := lastEntry(t, s.Log())
	assert.Equal(t, "resources/templates/list", e.Method)
	assert.Equal(t, http.StatusBadRequest, e.Status)
	assert.Equal(t, ByGateway, e.By)
	// The session survives: the next list reaches the server.
	res, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, res.Resources, 1)
	assert.Equal(t, ByServer, lastEntry(t, s.Log()).By)
}

func TestOccurrenceSelectsWhichMatchingRequestsARuleTakes(t *testing.T) {
	tests := []struct {
		name       string
		occurrence Occurrence
		failed     []bool // per call, 1..5
	}{
		{"every", Every(), []bool{true, true, true, true, true}},
		{"first", First(), []bool{true, false, false, false, false}},
		{"nth 2", Nth(2), []bool{false, true, false, false, false}},
		{"first 3", FirstN(3), []bool{true, true, true, false, false}},
		{"from 4", From(4), []bool{false, false, false, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, Options{})
			cs := connect(t, s, "2025-11-25", nil)
			ctx := testContext(t)
			// A rule on another method must not count tools/call requests.
			s.Gateway().Add(Rule{Match: Match{Method: "prompts/list"}, Action: Empty(500)})
			id := s.Gateway().Add(Rule{
				Match:  Match{Verb: "POST", Method: "tools/call", Session: WithSession, Occurrence: tt.occurrence},
				Action: JSONRPCError(http.StatusOK, RequestID, -32603, "injected"),
			})

			var got []bool
			fired := 0
			for i := range tt.failed {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: tt.name}})
				got = append(got, err != nil)
				if err != nil {
					fired++
				} else {
					require.False(t, res.IsError, "call %d", i+1)
				}
			}

			assert.Equal(t, tt.failed, got)
			assert.Equal(t, fired, s.Gateway().Fired(id))
			assert.Equal(t, len(tt.failed)-fired, s.Invocations(RecordTool, tt.name), "the server ran exactly the calls the rule let through")
			assert.Equal(t, len(tt.failed), s.Log().Count("tools/call"))
		})
	}
}

func TestFirstMatchingRuleWinsAndEveryRuleCounts(t *testing.T) {
	s := startServer(t, Options{})
	a := s.Gateway().Add(Rule{Match: Match{Method: "tools/list", Occurrence: First()}, Action: Empty(503)})
	b := s.Gateway().Add(Rule{Match: Match{Method: "tools/list", Occurrence: Nth(1)}, Action: Empty(502)})
	c := s.Gateway().Add(Rule{Match: Match{Method: "tools/list", Occurrence: Nth(2)}, Action: Empty(504)})

	r1, _ := post(t, s, "", toolsListBody)
	r2, _ := post(t, s, "", toolsListBody)

	assert.Equal(t, 503, r1.StatusCode, "the first rule takes the first request")
	assert.Equal(t, 504, r2.StatusCode, "the third rule counted the first request too")
	assert.Equal(t, []int{1, 0, 1}, []int{s.Gateway().Fired(a), s.Gateway().Fired(b), s.Gateway().Fired(c)})
}

func TestSessionMatch(t *testing.T) {
	s := startServer(t, Options{})
	s.Gateway().Add(Rule{Match: Match{Session: WithoutSession, Method: "tools/list"}, Action: Empty(401)})
	s.Gateway().Add(Rule{Match: Match{Session: WithSession, Method: "tools/list"}, Action: Empty(402)})

	withoutResp, _ := post(t, s, "", toolsListBody)
	id := rawSession(t, s)
	withResp, _ := post(t, s, id, toolsListBody)

	assert.Equal(t, 401, withoutResp.StatusCode)
	assert.Equal(t, 402, withResp.StatusCode)
}

func TestRulesChangeWhileATestRuns(t *testing.T) {
	s := startServer(t, Options{})
	cs := connect(t, s, "2025-11-25", nil)
	ctx := testContext(t)
	g := s.Gateway()
	call := func() error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "x"}})
		return err
	}

	id := g.Add(Rule{Match: Match{Method: "tools/call"}, Action: JSONRPCError(200, RequestID, -32603, "first")})
	err := call()
	require.ErrorContains(t, err, "first")

	require.True(t, g.Replace(id, Rule{Match: Match{Method: "tools/call"}, Action: JSONRPCError(200, RequestID, -32603, "second")}))
	require.ErrorContains(t, call(), "second")
	assert.Equal(t, 1, g.Fired(id), "a replaced rule counts from zero")

	require.True(t, g.Remove(id))
	require.False(t, g.Remove(id))
	require.False(t, g.Replace(id, Rule{}))
	require.NoError(t, call())

	g.Add(Rule{Match: Match{Method: "tools/call"}, Action: Empty(500)})
	g.Clear()
	require.NoError(t, call())
	assert.Equal(t, 2, s.Invocations(RecordTool, "x"))
}

func TestRulesAreSafeToChangeConcurrently(t *testing.T) {
	s := startServer(t, Options{})
	cs := connect(t, s, "2025-11-25", nil)
	ctx := testContext(t)
	g := s.Gateway()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			id := g.Add(Rule{Match: Match{Method: "tools/call"}, Action: JSONRPCError(200, RequestID, -32603, "x")})
			g.Replace(id, Rule{Match: Match{Method: "tools/list"}, Action: Pass()})
			g.Remove(id)
		}
	}()
	for range 20 {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "c"}})
	}
	<-done
	assert.Equal(t, 20, s.Log().Count("tools/call"))
}

func TestResetDropsTheConnection(t *testing.T) {
	s := startServer(t, Options{})
	id := s.Gateway().Add(Rule{Match: Match{Method: "tools/list"}, Action: Reset()})
	req, err := postRequest(testContext(t), s, "", toolsListBody)
	require.NoError(t, err)

	resp, err := s.HTTPClient().Do(req)

	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	assert.True(t, errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF), "got %v", err)
	e := lastEntry(t, s.Log())
	assert.Equal(t, 0, e.Status)
	assert.Equal(t, ByGateway, e.By)
	assert.Equal(t, id, e.Rule)
}

func TestDelayEndsWhenTheGatewayCloses(t *testing.T) {
	s := startServer(t, Options{})
	s.Gateway().Add(Rule{Match: Match{Method: "tools/list"}, Action: Delay(time.Hour)})
	ctx := testContext(t)
	type result struct {
		status int
		body   []byte
	}
	got := make(chan result, 1)
	go func() {
		req, _ := postRequest(ctx, s, "", toolsListBody)
		resp, err := s.HTTPClient().Do(req)
		if err != nil {
			got <- result{}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- result{resp.StatusCode, b}
	}()
	require.NoError(t, s.Log().WaitCount(ctx, "tools/list", 1))
	select {
	case <-got:
		t.Fatal("the delayed request was answered before the gateway released it")
	default:
	}

	s.Gateway().Close()

	r := <-got
	assert.Equal(t, http.StatusOK, r.status, "after the delay the request reaches the server")
	assert.Equal(t, ByServer, lastEntry(t, s.Log()).By)
}

func TestDelayEndsWithTheRequestContext(t *testing.T) {
	s := startServer(t, Options{})
	s.Gateway().Add(Rule{Match: Match{Method: "tools/list"}, Action: Delay(time.Hour)})
	ctx, cancel := context.WithCancel(testContext(t))
	errc := make(chan error, 1)
	go func() {
		req, _ := postRequest(ctx, s, "", toolsListBody)
		resp, err := s.HTTPClient().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	require.NoError(t, s.Log().WaitCount(testContext(t), "tools/list", 1))

	cancel()

	require.ErrorIs(t, <-errc, context.Canceled)
	// The gateway gives up on the request without passing it on.
	require.NoError(t, s.Log().WaitFunc(testContext(t), 1, func(e Entry) bool { return e.Method == "tools/list" && e.Done }))
	e := lastEntry(t, s.Log())
	assert.Equal(t, ByGateway, e.By)
	assert.Equal(t, 0, e.Status)
}

func TestGETHostileAnswersAnEmptyEventStream(t *testing.T) {
	s := startServer(t, Options{})
	s.Gateway().Add(GETHostile())
	id := rawSession(t, s)

	resp, err := get(testContext(t), s, id)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()

	require.NoError(t, err, "the stream ends cleanly")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Empty(t, body)
	e := lastDone(t, s.Log())
	assert.Equal(t, Entry{Seq: e.Seq, Verb: "GET", SessionID: id, ProtocolVersion: "2025-11-25", Status: 200, By: ByGateway, Rule: e.Rule, Done: true}, e)
	// POSTs are untouched.
	r, _ := post(t, s, id, toolsListBody)
	assert.Equal(t, http.StatusOK, r.StatusCode)
}

func TestGETHostileAgainstAGoSDKClientKeepsPOSTsWorking(t *testing.T) {
	s := startServer(t, Options{})
	s.Gateway().Add(GETHostile())
	cs := connect(t, s, "2025-11-25", nil)
	ctx := testContext(t)

	// go-sdk opens the standalone stream after the handshake and retries it
	// when it ends; wait for the retry, then check a call still works.
	require.NoError(t, s.Log().WaitVerb(ctx, "GET", 2))
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "g"}})

	require.NoError(t, err)
	assert.Equal(t, 1, s.Invocations(RecordTool, "g"))
	assert.Zero(t, s.Log().CountFunc(func(e Entry) bool { return e.Verb == "GET" && e.By == ByServer }))
}

func TestIdleCutEndsASilentStreamAtTheServer(t *testing.T) {
	s := startServer(t, Options{})
	s.Gateway().Add(IdleCut(20 * time.Millisecond))
	id := rawSession(t, s)

	resp, err := get(testContext(t), s, id)
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()

	require.NoError(t, err, "the cut ends the stream like a proxy closing it")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"), "the server answered")
	e := lastEntry(t, s.Log())
	assert.Equal(t, ByServer, e.By)
	assert.Equal(t, 200, e.Status)
	assert.Equal(t, []string{id}, s.SessionIDs(), "the cut does not end the session")
	// The session accepts a new stream after the cut.
	resp2, err := get(testContext(t), s, id)
	require.NoError(t, err)
	_, _ = io.ReadAll(resp2.Body)
	resp2.Body.Close()
	assert.Equal(t, http.StatusOK, resp2.StatusCode)
}

func TestHoldHeadersDropsTheConnectionWhenReleased(t *testing.T) {
	s := startServer(t, Options{})
	s.Gateway().Add(Rule{Match: Match{Verb: "GET"}, Action: HoldHeaders(time.Hour)})
	id := rawSession(t, s)
	errc := make(chan error, 1)
	go func() {
		resp, err := get(testContext(t), s, id)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	require.NoError(t, s.Log().WaitVerb(testContext(t), "GET", 1))
	select {
	case err := <-errc:
		t.Fatalf("headers were not held: %v", err)
	default:
	}

	s.Gateway().Close()

	require.Error(t, <-errc, "no response: the connection is closed")
	assert.Equal(t, 0, lastEntry(t, s.Log()).Status)
}

func TestRejectGET(t *testing.T) {
	for _, status := range []int{405, 404, 400} {
		s := startServer(t, Options{})
		s.Gateway().Add(RejectGET(status))
		resp, err := get(testContext(t), s, "x")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, status, resp.StatusCode)
		assert.Equal(t, http.StatusText(status), string(body))
		if status == 405 {
			assert.Equal(t, "POST", resp.Header.Get("Allow"))
		}
	}
}

func TestS4PresetsOnToolsCall(t *testing.T) {
	tests := []struct {
		rule       Rule
		status     int
		header     http.Header
		body       string
		wantInCall string
	}{
		{ToolCallServerError(), 500, http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, "Internal Server Error", "Internal Server Error"},
		{ToolCallRateLimited(30 * time.Second), 429, http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Retry-After": {"30"}}, "Too Many Requests", "Too Many Requests"},
		{ToolCallForbiddenHTML(), 403, http.Header{"Content-Type": {"text/html; charset=utf-8"}}, ForbiddenPage, "Forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.rule.Name, func(t *testing.T) {
			s := startServer(t, Options{})
			s.Gateway().Add(tt.rule)
			id := rawSession(t, s)

			resp, body := post(t, s, id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"record","arguments":{"id":"a"}}}`)

			assert.Equal(t, tt.status, resp.StatusCode)
			for k, v := range tt.header {
				assert.Equal(t, v, resp.Header.Values(k))
			}
			assert.Equal(t, tt.body, string(body))
			assert.Zero(t, s.Invocations(RecordTool, "a"))
			// A go-sdk client sees the call fail.
			cs := connect(t, s, "2025-11-25", nil)
			_, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "a"}})
			require.Error(t, err)
			assert.Zero(t, s.Invocations(RecordTool, "a"))
		})
	}
}

func TestStaleSessionPresets(t *testing.T) {
	tests := []struct {
		rule   Rule
		status int
		body   string
	}{
		{StaleSessionNullID(), 400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`},
		{StaleSessionNoID(), 400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`},
		{StaleSession500(), 500, "Internal Server Error"},
	}
	for _, tt := range tests {
		t.Run(tt.rule.Name, func(t *testing.T) {
			s := startServer(t, Options{})
			s.Gateway().Add(tt.rule)
			old := rawSession(t, s)
			require.NoError(t, s.Restart())

			resp, body := post(t, s, old, toolsListBody)

			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, tt.body, string(body))
			assert.Equal(t, ByGateway, lastEntry(t, s.Log()).By)
			// A fresh session on the restarted server is known: it passes.
			fresh := rawSession(t, s)
			resp, _ = post(t, s, fresh, toolsListBody)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, ByServer, lastEntry(t, s.Log()).By)
		})
	}
}

func TestStaleSessionNullIDKillsAGoSDKSessionAfterRestart(t *testing.T) {
	s := startServer(t, Options{})
	s.Gateway().Add(StaleSessionNullID())
	cs := connect(t, s, "2025-11-25", &mcp.ClientOptions{})
	require.NoError(t, s.Restart())

	_, err := cs.ListTools(testContext(t), nil)

	require.Error(t, err)
	assert.NotErrorIs(t, err, mcp.ErrSessionMissing, "a 400 is not go-sdk's session-missing signal")
	assert.GreaterOrEqual(t, s.Log().CountFunc(func(e Entry) bool {
		return e.Method == "tools/list" && e.Status == 400 && e.By == ByGateway
	}), 1)
}

func TestUnknownSessionNeverMatchesWithoutKnownSession(t *testing.T) {
	backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	g := NewGateway(backend, GatewayOptions{})
	g.Add(Rule{Match: Match{Session: UnknownSession}, Action: Empty(400)})
	ts := httptest.NewServer(g)
	defer ts.Close()
	req, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
	req.Header.Set(headerSessionID, "whatever")

	resp, err := ts.Client().Do(req)

	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.NoError(t, g.Log().WaitFunc(testContext(t), 1, func(e Entry) bool { return e.Done }))
	assert.Equal(t, []Entry{{Seq: 1, Verb: "DELETE", SessionID: "whatever", Status: 204, By: ByServer, Done: true}}, g.Log().Entries())
}

func TestCloseEndsEverythingInFlight(t *testing.T) {
	s, err := NewServer(Options{})
	require.NoError(t, err)
	g := s.Gateway()
	g.Add(IdleCut(time.Hour))
	g.Add(Rule{Match: Match{Method: "tools/list"}, Action: Delay(time.Hour)})
	g.Add(Rule{Match: Match{Method: "prompts/list"}, Action: HoldHeaders(time.Hour)})
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	ctx := testContext(t)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL(), HTTPClient: s.HTTPClient(), MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	errs := make(chan error, 3)
	go func() { _, err := cs.ListTools(ctx, nil); errs <- err }()
	go func() { _, err := cs.ListPrompts(ctx, nil); errs <- err }()
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: BlockTool, Arguments: IDArgs{ID: "f"}})
		errs <- err
	}()
	require.NoError(t, s.WaitBlocked(ctx, "f"))
	require.NoError(t, s.Log().WaitFunc(ctx, 3, func(e Entry) bool {
		return (e.Verb == "GET" && e.Status == 200) || e.Method == "tools/list" || e.Method == "prompts/list"
	}))

	s.Close() // returns although every hold asked for an hour

	for range 3 {
		<-errs
	}
	assert.Empty(t, s.SessionIDs())
	assert.Zero(t, s.Log().CountFunc(func(e Entry) bool { return !e.Done }), "every handler returned")
}

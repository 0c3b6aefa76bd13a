package mcptest

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewServerRejectsBadOptions(t *testing.T) {
	_, err := NewServer(Options{Tools: -1})
	require.ErrorIs(t, err, ErrInvalidOptions)
	_, err = NewServer(Options{Mode: Mode(9)})
	require.ErrorIs(t, err, ErrInvalidOptions)
}

func TestURLIsOnLoopback(t *testing.T) {
	s := startServer(t, Options{})
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+/mcp$`, s.URL())
}

func TestCatalogIsListedWhole(t *testing.T) {
	for _, mode := range []Mode{Stateful2025, Stateless2025, Sessionless2026} {
		t.Run(mode.String(), func(t *testing.T) {
			s := startServer(t, Options{Mode: mode, Tools: 12, Resources: 3, Prompts: 2, Templates: 2})
			cs := connect(t, s, "", nil)
			ctx := testContext(t)

			var tools, resources, prompts, templates []string
			for tool, err := range cs.Tools(ctx, nil) {
				require.NoError(t, err)
				tools = append(tools, tool.Name)
			}
			for r, err := range cs.Resources(ctx, nil) {
				require.NoError(t, err)
				resources = append(resources, r.URI)
			}
			for p, err := range cs.Prompts(ctx, nil) {
				require.NoError(t, err)
				prompts = append(prompts, p.Name)
			}
			for rt, err := range cs.ResourceTemplates(ctx, nil) {
				require.NoError(t, err)
				templates = append(templates, rt.URITemplate)
			}

			assert.Equal(t, s.ToolNames(), sorted(tools))
			assert.Len(t, tools, 14)
			assert.Contains(t, tools, RecordTool)
			assert.Contains(t, tools, BlockTool)
			assert.Contains(t, tools, ToolName(12))
			assert.Equal(t, []string{ResourceURI(1), ResourceURI(2), ResourceURI(3)}, sorted(resources))
			assert.Equal(t, s.ResourceURIs(), sorted(resources))
			assert.Equal(t, []string{PromptName(1), PromptName(2)}, sorted(prompts))
			assert.Equal(t, s.PromptNames(), sorted(prompts))
			assert.Equal(t, []string{TemplateURI(1), TemplateURI(2)}, sorted(templates))
			assert.Equal(t, s.TemplateURIs(), sorted(templates))

			caps := cs.InitializeResult().Capabilities
			assert.NotNil(t, caps.Tools)
			assert.NotNil(t, caps.Resources)
			assert.NotNil(t, caps.Prompts)

			echo, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolName(3), Arguments: EchoArgs{Text: "hi"}})
			require.NoError(t, err)
			assert.Equal(t, "tool-3: hi", echo.Content[0].(*mcp.TextContent).Text)
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ResourceURI(2)})
			require.NoError(t, err)
			assert.Equal(t, "resource 2", read.Contents[0].Text)
			prompt, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: PromptName(1)})
			require.NoError(t, err)
			assert.Equal(t, "prompt 1", prompt.Messages[0].Content.(*mcp.TextContent).Text)
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestAbsentKindsAreUndeclaredAndAnswerMethodNotFound(t *testing.T) {
	for _, mode := range []Mode{Stateful2025, Sessionless2026} {
		t.Run(mode.String(), func(t *testing.T) {
			s := startServer(t, Options{Mode: mode, WithoutTools: true})
			cs := connect(t, s, "", nil)
			ctx := testContext(t)

			caps := cs.InitializeResult().Capabilities
			assert.Nil(t, caps.Tools)
			assert.Nil(t, caps.Resources)
			assert.Nil(t, caps.Prompts)
			assert.Empty(t, s.ToolNames())

			_, errTools := cs.ListTools(ctx, nil)
			_, errResources := cs.ListResources(ctx, nil)
			_, errPrompts := cs.ListPrompts(ctx, nil)
			_, errTemplates := cs.ListResourceTemplates(ctx, nil)
			for _, err := range []error{errTools, errResources, errPrompts, errTemplates} {
				var jerr *jsonrpc.Error
				require.ErrorAs(t, err, &jerr)
				assert.Equal(t, int64(-32601), jerr.Code)
			}
			// The server answered, not the gateway; 2025-era servers say so in
			// a 200, go-sdk's 2026-07-28 server with a 404 (SEP-2575).
			wantStatus := http.StatusOK
			if mode == Sessionless2026 {
				wantStatus = http.StatusNotFound
			}
			assert.Equal(t, 4, s.Log().CountFunc(func(e Entry) bool {
				return slices.Contains([]string{"tools/list", "resources/list", "prompts/list", "resources/templates/list"}, e.Method) &&
					e.By == ByServer && e.Status == wantStatus
			}))
		})
	}
}

// UndeclaredTools: the handshake declares no tools capability, yet the
// tools are listed and served.
func TestUndeclaredToolsAreListedAndServed(t *testing.T) {
	for _, mode := range []Mode{Stateful2025, Sessionless2026} {
		t.Run(mode.String(), func(t *testing.T) {
			s := startServer(t, Options{Mode: mode, Tools: 1, UndeclaredTools: true})
			cs := connect(t, s, "", nil)
			ctx := testContext(t)
			assert.Nil(t, cs.InitializeResult().Capabilities.Tools)
			res, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			assert.Len(t, res.Tools, 3)
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "u"}})
			require.NoError(t, err)
			assert.Equal(t, 1, s.Invocations(RecordTool, "u"))
		})
	}
}

// ResetAfterServer: the server runs the call, the client gets no answer.
// IdempotentRecord adds a recording tool annotated idempotentHint.
func TestResetAfterServerRunsTheCallAndLosesTheAnswer(t *testing.T) {
	s := startServer(t, Options{IdempotentRecord: true})
	cs := connect(t, s, "", nil)
	ctx := testContext(t)
	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var idem *mcp.Tool
	for _, tl := range res.Tools {
		if tl.Name == IdempotentRecordTool {
			idem = tl
		}
	}
	require.NotNil(t, idem)
	assert.True(t, idem.Annotations.IdempotentHint)
	s.Gateway().Add(Rule{Match: Match{Method: "tools/call", Occurrence: First()}, Action: ResetAfterServer()})
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: IdempotentRecordTool, Arguments: IDArgs{ID: "x"}})
	require.Error(t, err, "no answer")
	assert.Equal(t, 1, s.Invocations(IdempotentRecordTool, "x"), "the server ran it")
}

func TestTemplatesAbsentWhileResourcesPresent(t *testing.T) {
	s := startServer(t, Options{Resources: 1})
	cs := connect(t, s, "2025-11-25", nil)

	_, err := cs.ListResourceTemplates(testContext(t), nil)

	var jerr *jsonrpc.Error
	require.ErrorAs(t, err, &jerr)
	assert.Equal(t, int64(-32601), jerr.Code)
	assert.NotNil(t, cs.InitializeResult().Capabilities.Resources)
}

func TestModes(t *testing.T) {
	t.Run("stateful 2025 is pinned below 2026-07-28", func(t *testing.T) {
		s := startServer(t, Options{})
		cs := connect(t, s, "", nil) // go-sdk tries server/discover first

		assert.Equal(t, "2025-11-25", cs.InitializeResult().ProtocolVersion)
		assert.NotEmpty(t, cs.ID())
		assert.Equal(t, []string{cs.ID()}, s.SessionIDs())
		assert.Equal(t, 1, s.Log().CountFunc(func(e Entry) bool { return e.Method == "server/discover" && e.Status == 400 }))
		assert.Equal(t, 1, s.Log().Count("initialize"))
		require.NoError(t, s.Log().WaitFunc(testContext(t), 1, func(e Entry) bool { return e.Verb == "GET" && e.Status == 200 }))
	})
	t.Run("stateless 2025 issues no session id", func(t *testing.T) {
		s := startServer(t, Options{Mode: Stateless2025})
		cs := connect(t, s, "2025-11-25", nil)
		_, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "s"}})
		require.NoError(t, err)

		assert.Equal(t, "2025-11-25", cs.InitializeResult().ProtocolVersion)
		assert.Empty(t, cs.ID())
		assert.Empty(t, s.SessionIDs())
		assert.Zero(t, s.Log().CountFunc(func(e Entry) bool { return e.SessionID != "" }))
		require.NoError(t, s.Log().WaitFunc(testContext(t), 1, func(e Entry) bool { return e.Verb == "GET" && e.Status == 405 }))
	})
	t.Run("sessionless 2026-07-28", func(t *testing.T) {
		s := startServer(t, Options{Mode: Sessionless2026})
		cs := connect(t, s, "", nil)
		_, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "n"}})
		require.NoError(t, err)

		assert.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
		assert.Empty(t, cs.ID())
		assert.Equal(t, 1, s.Log().Count("server/discover"))
		assert.Zero(t, s.Log().Count("initialize"))
		assert.Zero(t, s.Log().CountVerb("GET"))
		assert.Equal(t, 1, s.Invocations(RecordTool, "n"))
	})
}

func TestRecordToolCountsEveryInvocationByID(t *testing.T) {
	s := startServer(t, Options{})
	cs := connect(t, s, "2025-11-25", nil)
	ctx := testContext(t)

	for range 3 {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "a"}})
		require.NoError(t, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "b"}})
	require.NoError(t, err)

	assert.Equal(t, 3, s.Invocations(RecordTool, "a"))
	assert.Equal(t, 1, s.Invocations(RecordTool, "b"))
	assert.Zero(t, s.Invocations(BlockTool, "a"))
	assert.Equal(t, "recorded b #1", res.Content[0].(*mcp.TextContent).Text)
}

func TestBlockToolHoldsUntilReleased(t *testing.T) {
	s := startServer(t, Options{})
	cs := connect(t, s, "2025-11-25", nil)
	ctx := testContext(t)
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: BlockTool, Arguments: IDArgs{ID: "k"}})
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{text: res.Content[0].(*mcp.TextContent).Text}
	}()
	require.NoError(t, s.WaitBlocked(ctx, "k"))
	select {
	case r := <-done:
		t.Fatalf("block returned before release: %+v", r)
	default:
	}

	s.Release("k")

	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, "released k #1", r.text)
	assert.Equal(t, 1, s.Invocations(BlockTool, "k"))
	// Released ids stay released.
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: BlockTool, Arguments: IDArgs{ID: "k"}})
	require.NoError(t, err)
}

func TestBlockToolEndsWithTheCallersContext(t *testing.T) {
	s := startServer(t, Options{})
	cs := connect(t, s, "2025-11-25", nil)
	ctx, cancel := context.WithCancel(testContext(t))
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: BlockTool, Arguments: IDArgs{ID: "c"}})
		errc <- err
	}()
	require.NoError(t, s.WaitBlocked(testContext(t), "c"))

	cancel()

	require.ErrorIs(t, <-errc, context.Canceled)
	// The session is still usable.
	_, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "c"}})
	require.NoError(t, err)
}

func TestCloseReleasesABlockedCall(t *testing.T) {
	s := startServer(t, Options{})
	cs := connect(t, s, "2025-11-25", nil)
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: BlockTool, Arguments: IDArgs{ID: "z"}})
		done <- outcome{res, err}
	}()
	require.NoError(t, s.WaitBlocked(testContext(t), "z"))

	s.Close()

	// The tool ends with an error, which go-sdk delivers as an IsError
	// result when the answer beats the closing connection, else the call
	// fails: either way it is released, never answered as a success.
	got := <-done
	require.True(t, got.err != nil || (got.res != nil && got.res.IsError), "the blocked call must end unsuccessfully: %+v", got)
	require.ErrorIs(t, s.Restart(), ErrClosed)
}

// Expiring a session ends its blocked calls, as a server's session timeout
// ends the session's work: ExpireSession and ExpireAll return without a
// Release (go-sdk's ServerSession.Close waits for the session's handlers),
// and the call ends unsuccessfully.
func TestExpireEndsTheSessionsBlockedCalls(t *testing.T) {
	for name, expire := range map[string]func(*Server, *mcp.ClientSession){
		"ExpireSession": func(s *Server, cs *mcp.ClientSession) { require.True(t, s.ExpireSession(cs.ID())) },
		"ExpireAll":     func(s *Server, _ *mcp.ClientSession) { require.Equal(t, 1, s.ExpireAll()) },
	} {
		t.Run(name, func(t *testing.T) {
			s := startServer(t, Options{MaxBlock: time.Hour})
			cs := connect(t, s, "2025-11-25", nil)
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: BlockTool, Arguments: IDArgs{ID: "x"}})
				done <- outcome{res, err}
			}()
			require.NoError(t, s.WaitBlocked(testContext(t), "x"))

			expired := make(chan struct{})
			go func() {
				defer close(expired)
				expire(s, cs)
			}()
			select {
			case <-expired:
			case <-testContext(t).Done():
				t.Fatal("expiring the session waited for its blocked call")
			}
			got := <-done
			require.True(t, got.err != nil || (got.res != nil && got.res.IsError), "the blocked call must end unsuccessfully: %+v", got)
			assert.Empty(t, s.SessionIDs())
		})
	}
}

func TestExpireSessionGives404(t *testing.T) {
	s := startServer(t, Options{})
	cs := connect(t, s, "2025-11-25", nil)
	other := rawSession(t, s)
	require.Len(t, s.SessionIDs(), 2)

	require.True(t, s.ExpireSession(cs.ID()))
	require.False(t, s.ExpireSession(cs.ID()))
	_, err := cs.ListTools(testContext(t), nil)

	require.ErrorIs(t, err, mcp.ErrSessionMissing)
	e := lastEntry(t, s.Log())
	assert.Equal(t, cs.ID(), e.SessionID)
	assert.Equal(t, http.StatusNotFound, e.Status)
	assert.Equal(t, ByServer, e.By, "go-sdk itself answers an unknown session with 404")
	assert.Equal(t, []string{other}, s.SessionIDs(), "only that session expired")

	assert.Equal(t, 1, s.ExpireAll())
	resp, _ := post(t, s, other, toolsListBody)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestRestartMakesOldSessionIDsUnknown(t *testing.T) {
	s := startServer(t, Options{Tools: 1})
	url := s.URL()
	cs := connect(t, s, "2025-11-25", nil)
	ctx := testContext(t)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "r"}})
	require.NoError(t, err)
	old := cs.ID()

	require.NoError(t, s.Restart())

	assert.Equal(t, url, s.URL())
	assert.False(t, s.KnownSession(old))
	resp, _ := post(t, s, old, toolsListBody)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	_, err = cs.ListTools(ctx, nil)
	require.ErrorIs(t, err, mcp.ErrSessionMissing)

	fresh := connect(t, s, "2025-11-25", nil)
	assert.NotEqual(t, old, fresh.ID())
	res, err := fresh.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, res.Tools, 3, "the catalog survives a restart")
	_, err = fresh.CallTool(ctx, &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "r"}})
	require.NoError(t, err)
	assert.Equal(t, 2, s.Invocations(RecordTool, "r"), "counts survive a restart")
}

func TestLogCountsWhatWasSent(t *testing.T) {
	s := startServer(t, Options{})
	ctx := testContext(t)
	cs := connect(t, s, "2025-11-25", nil)
	require.NoError(t, s.Log().WaitVerb(ctx, "GET", 1))
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: RecordTool, Arguments: IDArgs{ID: "l"}})
	require.NoError(t, err)
	id := cs.ID()

	require.NoError(t, cs.Close())

	l := s.Log()
	assert.Equal(t, 1, l.Count("initialize"))
	assert.Equal(t, 1, l.Count("notifications/initialized"))
	assert.Equal(t, 1, l.Count("tools/call"))
	assert.Zero(t, l.Count("server/discover"))
	assert.Equal(t, 3, l.CountVerb("POST"))
	assert.Equal(t, 1, l.CountVerb("GET"))
	require.NoError(t, l.WaitVerb(ctx, "DELETE", 1))
	require.NoError(t, l.WaitFunc(ctx, 1, func(e Entry) bool { return e.Seq == 1 && e.Done }))
	es := l.Entries()
	assert.Equal(t, Entry{Seq: 1, Verb: "POST", Method: "initialize", ID: "1", Status: 200, By: ByServer, Done: true}, es[0])
	call := es[slices.IndexFunc(es, func(e Entry) bool { return e.Method == "tools/call" })]
	assert.Equal(t, id, call.SessionID)
	assert.Equal(t, "2025-11-25", call.ProtocolVersion)
	assert.Equal(t, 200, call.Status)
	del := es[slices.IndexFunc(es, func(e Entry) bool { return e.Verb == "DELETE" })]
	assert.Equal(t, id, del.SessionID)

	l.Reset()
	assert.Empty(t, l.Entries())
	assert.Zero(t, l.Count("initialize"))
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, l.WaitCount(canceled, "initialize", 1), context.Canceled)
}

func TestWaitCountWakesOnANewRequest(t *testing.T) {
	s := startServer(t, Options{})
	ctx := testContext(t)
	waited := make(chan error, 1)
	go func() { waited <- s.Log().WaitCount(ctx, "initialize", 2) }()

	connect(t, s, "2025-11-25", nil)
	connect(t, s, "2025-11-25", nil)

	require.NoError(t, <-waited)
}

func TestToolListChangedReachesConnectedSessions(t *testing.T) {
	s := startServer(t, Options{})
	changed := make(chan struct{}, 4)
	cs := connect(t, s, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx := testContext(t)
	// The notification travels on the standalone stream: wait for it.
	require.NoError(t, s.Log().WaitFunc(ctx, 1, func(e Entry) bool { return e.Verb == "GET" && e.Status == 200 }))

	s.AddTool("late")
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed after AddTool")
	}
	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{BlockTool, "late", RecordTool}, names(res.Tools))
	assert.Equal(t, []string{BlockTool, "late", RecordTool}, s.ToolNames())

	require.True(t, s.RemoveTool("late"))
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed after RemoveTool")
	}
	res, err = cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{BlockTool, RecordTool}, names(res.Tools))
	assert.False(t, s.RemoveTool("late"))

	// Runtime changes survive a restart.
	s.AddTool("kept")
	require.NoError(t, s.Restart())
	assert.Contains(t, s.ToolNames(), "kept")
}

func names(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

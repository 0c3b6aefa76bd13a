package httpsession_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
)

// A resumed session is the server's session of before, where go-sdk's new
// ClientSession numbers its requests from 1 again. MCP (basic, requests):
// a request id MUST NOT have been used by the requestor within the same
// session. The previous holder's call still runs on the server (its holder
// died, or detached, mid-call): the resumed session's calls must not reuse
// its id, which go-sdk's server refuses ("duplicate in-flight request ID")
// and a server that deduplicates by id would answer with the old call's
// result. Every id the resumed session sends differs from every id of
// before, and its calls get their own results.
func TestResumedSessionNeverReusesARequestID(t *testing.T) {
	ctx, cancel, srv, opts := recordingServer(t)
	defer cancel()
	first, err := httpsession.Open(ctx, opts)
	require.NoError(t, err)
	for _, id := range []string{"a", "b", "c"} {
		_, err := first.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}})
		require.NoError(t, err)
	}
	// A call that outlives its session's holder.
	go func() {
		_, _ = first.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: mcptest.BlockTool, Arguments: mcptest.IDArgs{ID: "held"}})
	}()
	require.NoError(t, srv.WaitBlocked(ctx, "held"))
	before := map[string]bool{}
	for _, e := range srv.Log().Entries() {
		if e.ID != "" {
			before[e.ID] = true
		}
	}
	// The first holder sends nothing more, as if it had died: its call
	// still runs on the server when the session is resumed.
	st := first.ResumeState()
	t.Cleanup(func() {
		srv.Release("held")
		_ = first.Detach()
	})

	resumed, err := httpsession.Resume(ctx, opts, st)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resumed.Close() })
	mark := len(srv.Log().Entries())
	for _, id := range []string{"d", "e", "f", "g", "h"} {
		res, err := resumed.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}})
		require.NoError(t, err, "call %s", id)
		require.Equal(t, "recorded "+id+" #1", res.Content[0].(*mcp.TextContent).Text, "the call's own result")
	}
	_, err = resumed.ClientSession().ListTools(ctx, nil)
	require.NoError(t, err)
	sent := 0
	for _, e := range srv.Log().Entries()[mark:] {
		if e.ID == "" {
			continue
		}
		sent++
		require.False(t, before[e.ID], "id %s was the previous session's", e.ID)
	}
	require.Equal(t, 6, sent)
}

// The cancellation of a call on a resumed session names the call by the id
// it went out with: the server's handler of that call is the one canceled.
func TestResumedSessionCancelsTheCallItSent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	started, canceled := make(chan struct{}, 1), make(chan struct{}, 1)
	released := make(chan struct{}) // a handler never canceled ends with the test
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "v1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			canceled <- struct{}{}
		case <-released:
		}
		return nil, nil, ctx.Err()
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() {
		close(released)
		hs.Close()
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	opts := httpsession.Options{Endpoint: hs.URL, Era: httpsession.Era2025, Stream: httpsession.StreamOff}
	first, err := httpsession.Open(ctx, opts)
	require.NoError(t, err)
	list := func(cs *mcp.ClientSession) {
		_, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
	}
	list(first.ClientSession())
	resumed := detachAndResume(t, ctx, first, opts)
	list(resumed.ClientSession())

	callCtx, callCancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := resumed.ClientSession().CallTool(callCtx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
		errc <- err
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the call never reached its handler")
	}
	callCancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	select {
	case <-canceled:
	case <-ctx.Done():
		t.Fatal("notifications/cancelled did not name the call the server runs")
	}
}

// A JSON answer (application/json) to a shifted call reaches go-sdk with
// go-sdk's id, as an event-stream one does.
func TestResumedSessionTakesJSONAnswers(t *testing.T) {
	_, url := newServer(t, &mcp.StreamableHTTPOptions{JSONResponse: true})
	opts := httpsession.Options{Endpoint: url, Era: httpsession.Era2025, Stream: httpsession.StreamOff}
	first := open(t, url, opts)
	callEcho(t, first.ClientSession())
	resumed := detachAndResume(t, context.Background(), first, opts)
	for range 3 {
		callEcho(t, resumed.ClientSession())
	}
	_, err := resumed.ClientSession().ListPrompts(context.Background(), nil)
	require.NoError(t, err)
}

// A 404 whose JSON-RPC error answers the call by the id it went out with
// fails that call alone on a resumed session too: the answer names the
// call, so the session is not gone (classify.HTTPError.SessionGone), and
// the next call is served on it.
func TestResumedSessionTakesA404AnsweringTheCall(t *testing.T) {
	g, url := newServer(t, &mcp.StreamableHTTPOptions{JSONResponse: true})
	var gone []bool
	var mu sync.Mutex
	opts := httpsession.Options{Endpoint: url, Era: httpsession.Era2025, Stream: httpsession.StreamOff, Wire: httpsession.Config{
		OnExchange: func(x httpsession.Exchange) {
			if x.Method == "tools/call" {
				mu.Lock()
				gone = append(gone, x.SessionGone)
				mu.Unlock()
			}
		},
	}}
	first := open(t, url, opts)
	callEcho(t, first.ClientSession())
	resumed := detachAndResume(t, context.Background(), first, opts)
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "tools/call" || n != 1 { // n 0 was the first session's call
			return false
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &m)
		writeFault(w, http.StatusNotFound, "application/json",
			`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32602,"message":"no such item"}}`, nil)
		return true
	})
	_, err := resumed.ClientSession().CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.ErrorContains(t, err, "no such item")
	callEcho(t, resumed.ClientSession())
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []bool{false, false, false}, gone, "no answer said the session was gone")
}

// The Session's own server/discover requests are numbered past the id shift
// too: a resumed session's earlier holder numbered its own from 1 as well.
func TestResumedSessionNumbersItsDiscoverPastTheShift(t *testing.T) {
	ctx, cancel, srv, opts := recordingServer(t)
	defer cancel()
	discoverIDs := func() []string {
		var ids []string
		for _, e := range srv.Log().Entries() {
			if e.Method == "server/discover" {
				ids = append(ids, e.ID)
			}
		}
		return ids
	}
	first, err := httpsession.Open(ctx, opts)
	require.NoError(t, err)
	_ = first.Discover(ctx) // a 2025 server refuses it; its id is what counts
	resumed := detachAndResume(t, ctx, first, opts)
	_ = resumed.Discover(ctx)
	ids := discoverIDs()
	require.Len(t, ids, 2)
	require.Equal(t, `"mcpsup-discover-1"`, ids[0], "a fresh session numbers from 1")
	require.NotEqual(t, ids[0], ids[1], "the resumed session does not reuse it")
}

// recordingServer starts an mcptest server, which logs every request's
// JSON-RPC id, and returns the test's context (to cancel when the test
// ends, before its cleanups) and the options of a 2025 session on it with
// the stream off.
func recordingServer(t *testing.T) (context.Context, context.CancelFunc, *mcptest.Server, httpsession.Options) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return ctx, cancel, srv, httpsession.Options{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient(), Era: httpsession.Era2025, Stream: httpsession.StreamOff}
}

// detachAndResume detaches first and resumes its session with opts: the
// server's session of before, on a new go-sdk ClientSession, closed when
// the test ends.
func detachAndResume(t *testing.T, ctx context.Context, first *httpsession.Session, opts httpsession.Options) *httpsession.Session {
	t.Helper()
	st := first.ResumeState()
	require.NoError(t, first.Detach())
	resumed, err := httpsession.Resume(ctx, opts, st)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resumed.Close() })
	return resumed
}

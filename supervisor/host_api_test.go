//lint:file-ignore SA1019 roots are deprecated from protocol 2026-07-28 on (SEP-2577), and still served by 2025-era servers

package supervisor_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

func TestInitializeResultLiveAndResumed(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{})
	assert.Nil(t, e.sup.InitializeResult(), "before the first handshake")
	e.start()
	ir := e.sup.InitializeResult()
	require.NotNil(t, ir)
	require.NotNil(t, ir.ServerInfo)
	name := ir.ServerInfo.Name

	rs := persisted(t, e, false)
	known, _ := resumeE2E(t, e, rs, supervisor.Config{})
	require.NotNil(t, known.InitializeResult(), "a known resume has it from the state, before Start")
	assert.Equal(t, name, known.InitializeResult().ServerInfo.Name)
	known.Start()
	require.NoError(t, known.WaitForState(e.ctx, supervisor.Ready))
	assert.Equal(t, name, known.InitializeResult().ServerInfo.Name)
	require.NoError(t, known.Detach())

	blindState := *rs
	blindState.InitializeResult = nil
	blind, _ := resumeE2E(t, e, &blindState, supervisor.Config{})
	blind.Start()
	require.NoError(t, blind.WaitForState(e.ctx, supervisor.Ready))
	assert.Nil(t, blind.InitializeResult(), "unknown after a blind resume")
}

func TestPing(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{})
	e.start()
	require.NoError(t, e.sup.Ping(e.ctx))
	assert.Equal(t, 1, e.srv.Log().Count("ping"))
}

// A 2026-07-28 session has no ping: Ping asks with server/discover, as the
// keepalive does, and succeeds.
func TestPingOn20260728SendsDiscover(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1, Mode: mcptest.Sessionless2026}, supervisor.Config{Era: supervisor.Era20260728})
	e.start()
	discovers := e.srv.Log().Count("server/discover")
	require.NoError(t, e.sup.Ping(e.ctx))
	assert.Equal(t, 0, e.srv.Log().Count("ping"))
	assert.Equal(t, discovers+1, e.srv.Log().Count("server/discover"))
}

func TestClientOptionsKeepAliveIsTheSupervisors(t *testing.T) {
	_, err := supervisor.New(supervisor.Config{
		Endpoint: "http://127.0.0.1:1/mcp",
		Recovery: supervisor.RecoveryConfig{KeepAlive: time.Minute},
		Client:   supervisor.ClientConfig{ClientOptions: mcp.ClientOptions{KeepAlive: 2 * time.Minute}},
	})
	require.ErrorIs(t, err, supervisor.ErrConfigConflict)

	clock := clockwork.NewFakeClock()
	// No catalog poll: its timer would be a waiter on the clock too, and
	// the keepalive's ticker starts on a goroutine of its own, so one
	// waiter would not say the ticker is there.
	e := newE2E(t, mcptest.Options{Tools: 1}, supervisor.Config{
		Observe: supervisor.ObserveConfig{Clock: clock},
		Stream:  supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Limits:  supervisor.LimitsConfig{CatalogPollInterval: -1},
		Client:  supervisor.ClientConfig{ClientOptions: mcp.ClientOptions{KeepAlive: time.Hour}},
	})
	e.start()
	require.NoError(t, clock.BlockUntilContext(e.ctx, 1), "the keepalive's ticker")
	clock.Advance(time.Hour)
	require.NoError(t, e.srv.Log().WaitCount(e.ctx, "ping", 1), "go-sdk's KeepAlive runs as the supervisor's")
}

// rootsServer is a go-sdk server that asks the client for its roots on
// every roots list_changed and keeps the last answer.
type rootsServer struct {
	mu    sync.Mutex
	roots [][]string
	seen  chan struct{}
	gets  chan struct{} // one value per standalone stream GET served
}

func (rs *rootsServer) last() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.roots) == 0 {
		return nil
	}
	return rs.roots[len(rs.roots)-1]
}

func newRootsServer(t *testing.T) (*rootsServer, string) {
	rs := &rootsServer{seen: make(chan struct{}, 16), gets: make(chan struct{}, 16)}
	srv := mcp.NewServer(&mcp.Implementation{Name: "roots", Version: "1"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			slices.Sort(uris)
			rs.mu.Lock()
			rs.roots = append(rs.roots, uris)
			rs.mu.Unlock()
			rs.seen <- struct{}{}
		},
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			select {
			case rs.gets <- struct{}{}:
			default:
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return rs, hs.URL
}

// Roots from Config and AddRoots/RemoveRoots reach the live session (the
// server hears roots list_changed and lists them) and every later one; the
// host's middleware sees every request sent and received.
func TestRootsAndMiddlewareOnEverySession(t *testing.T) {
	rsrv, url := newRootsServer(t)
	var mu sync.Mutex
	var sent, received []string
	record := func(into *[]string) mcp.Middleware {
		return func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				mu.Lock()
				*into = append(*into, method)
				mu.Unlock()
				return next(ctx, method, req)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sup := mustNew(t, supervisor.Config{
		Endpoint: url,
		Name:     t.Name(),
		Client: supervisor.ClientConfig{
			Roots:               []*mcp.Root{{URI: "file:///a"}},
			SendingMiddleware:   []mcp.Middleware{record(&sent)},
			ReceivingMiddleware: []mcp.Middleware{record(&received)},
		},
	})
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	// The server asks for the roots on the standalone stream: wait for it.
	within(t, rsrv.gets)

	sup.AddRoots(&mcp.Root{URI: "file:///b"})
	within(t, rsrv.seen)
	assert.Equal(t, []string{"file:///a", "file:///b"}, rsrv.last())
	sup.RemoveRoots("file:///a")
	within(t, rsrv.seen)
	assert.Equal(t, []string{"file:///b"}, rsrv.last())

	// A later session starts with the roots as they are now.
	sup.Reconnect()
	require.True(t, sup.WaitForStateChange(ctx, supervisor.Ready))
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	assert.Equal(t, 2, sup.SessionsOpened())
	within(t, rsrv.gets) // the new session's stream
	sup.AddRoots(&mcp.Root{URI: "file:///c"})
	within(t, rsrv.seen)
	assert.Equal(t, []string{"file:///b", "file:///c"}, rsrv.last())

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, countOf(sent, "initialize"), "the handshake of both sessions")
	assert.Contains(t, sent, "tools/list")
	assert.Contains(t, sent, "notifications/roots/list_changed")
	assert.Equal(t, 3, countOf(received, "roots/list"))
}

func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func within(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out")
	}
}

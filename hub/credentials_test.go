package hub_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/supervisor"
)

// authServer is a go-sdk server on 127.0.0.1 with one tool, "whoami", that
// records the Authorization header of every request it receives.
type authServer struct {
	url  string
	mu   sync.Mutex
	seen []string
}

func newAuthServer(t *testing.T) *authServer {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "auth-server", Version: "v1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	s := &authServer{}
	next := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Header.Get("Authorization"))
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		hs.Close()
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	s.url = hs.URL
	return s
}

// authorizations returns the distinct Authorization headers received.
func (s *authServer) authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.seen)
	slices.Sort(out)
	return slices.Compact(out)
}

func (s *authServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// staticHandler is an OAuth handler with a fixed token.
type staticHandler struct{ token string }

func (h staticHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: h.token}), nil
}
func (staticHandler) Authorize(context.Context, *http.Request, *http.Response) error { return nil }

func authHubConfig(t *testing.T) hub.Config {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return hub.Config{Supervisor: supervisor.Config{
		Era:    supervisor.Era2025,
		HTTP:   supervisor.HTTPConfig{HTTPClient: &http.Client{Transport: tr}},
		Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff},
	}}
}

// TestEachServerGetsOnlyItsOwnCredential: two servers, each with its own
// OAuth handler (Config.Credentials) and its own header: each receives its
// own token, never the other's. "MCP clients MUST NOT send tokens to the
// MCP server other than ones issued by the MCP server's authorization
// server" (MCP 2025-11-25, basic/authorization.mdx, Token Handling).
// A template OAuthHandler, which would reach every server, is refused:
// before, server B received A's token on every request.
func TestEachServerGetsOnlyItsOwnCredential(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()

	t.Run("per server", func(t *testing.T) {
		a, b := newAuthServer(t), newAuthServer(t)
		cfg := authHubConfig(t)
		cfg.Credentials = func(sc hub.ServerConfig) auth.OAuthHandler {
			if sc.Name == "a" {
				return staticHandler{"token-of-a-0123456789"}
			}
			return nil // b authenticates by its header
		}
		cfg.LookupEnv = func(name string) (string, bool) {
			if name == "B_KEY" {
				return "token-of-b-0123456789", true
			}
			return "", false
		}
		rec := &events.Recorder{}
		cfg.Events = rec
		f, err := hub.ParseServers([]byte(`{"mcpServers": {"a": {"url": "` + a.url + `"},
			"b": {"url": "` + b.url + `", "headers": {"Authorization": "Bearer ${B_KEY}"}}}}`))
		require.NoError(t, err)
		h := hub.New(cfg)
		t.Cleanup(func() { _ = h.Close() })
		require.NoError(t, h.AddServers(ctx, f))
		require.NoError(t, h.WaitReady(ctx, hub.All))
		for _, name := range []string{"a__whoami", "b__whoami"} {
			_, err := h.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
			require.NoError(t, err)
		}
		require.Equal(t, []string{"Bearer token-of-a-0123456789"}, a.authorizations())
		require.Equal(t, []string{"Bearer token-of-b-0123456789"}, b.authorizations())
		require.Equal(t, "Bearer ${B_KEY}", f.Servers[1].Headers["Authorization"], "the entry keeps the reference, not the value")
		for _, ev := range rec.Events() {
			js, err := ev.MarshalJSON()
			require.NoError(t, err)
			require.NotContains(t, string(js), "token-of-b-0123456789")
		}
	})

	t.Run("template handler refused", func(t *testing.T) {
		a, b := newAuthServer(t), newAuthServer(t)
		cfg := authHubConfig(t)
		cfg.Supervisor.HTTP.OAuthHandler = staticHandler{"token-of-a-0123456789"} // meant for a
		h := hub.New(cfg)
		t.Cleanup(func() { _ = h.Close() })
		for _, sc := range []hub.ServerConfig{{Name: "a", URL: a.url}, {Name: "b", URL: b.url}} {
			err := h.Add(ctx, sc)
			var se *hub.ServerError
			require.ErrorAs(t, err, &se)
			require.ErrorIs(t, err, hub.ErrSharedCredential)
		}
		require.Empty(t, h.Names())
		require.NotContains(t, b.authorizations(), "Bearer token-of-a-0123456789", "b never sees a's token")
		require.Zero(t, b.requests())
	})

	t.Run("unset variable", func(t *testing.T) {
		cfg := authHubConfig(t)
		cfg.LookupEnv = func(string) (string, bool) { return "", false }
		h := hub.New(cfg)
		t.Cleanup(func() { _ = h.Close() })
		err := h.Add(ctx, hub.ServerConfig{Name: "c", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"X-Key": "${env:C_KEY}"}})
		require.ErrorIs(t, err, hub.ErrUnsetVariable)
		require.Contains(t, err.Error(), "C_KEY")
	})
}

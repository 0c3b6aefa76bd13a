package httpsession_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
)

// The Session's own server/discover identifies the client: the 2026-07-28
// changelog (item 2) says "Clients SHOULD identify themselves on each
// request (io.modelcontextprotocol/clientInfo)". Read at a go-sdk server,
// which answers it.
func TestSessionDiscoverCarriesClientInfo(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var mu sync.Mutex
	var seen []map[string]any // the clientInfo of each of the Session's own discovers
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     any `json:"id"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil {
			if id, _ := msg.ID.(string); strings.HasPrefix(id, "mcpsup-discover-") {
				info, _ := msg.Params.Meta["io.modelcontextprotocol/clientInfo"].(map[string]any)
				mu.Lock()
				seen = append(seen, info)
				mu.Unlock()
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)

	for _, c := range []struct {
		info *mcp.Implementation
		want map[string]any
	}{
		{&mcp.Implementation{Name: "host", Version: "1.2"}, map[string]any{"name": "host", "version": "1.2"}},
		{nil, map[string]any{"name": "mcpsup", "version": "v0"}},
	} {
		s, err := open2026(t, ts.URL, httpsession.Options{HTTPClient: ts.Client(), ClientInfo: c.info})
		require.NoError(t, err)
		require.NoError(t, s.Discover(context.Background()), "the server answers it")
		mu.Lock()
		require.NotEmpty(t, seen)
		require.Equal(t, c.want, seen[len(seen)-1])
		mu.Unlock()
	}
}

package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A hub of 20 entries on one server: all ready, each with the server's one
// tool under its own name, their goroutines counted; and the figure's
// Markdown.
func TestHubIdleCountsPerServer(t *testing.T) {
	srv, err := NewPlainServer()
	require.NoError(t, err)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := HubIdle(ctx, srv.URL(), 20, false)
	require.NoError(t, r.Err)
	require.Equal(t, 20, r.Tools, "one record tool per entry, each qualified by its name")
	require.Greater(t, r.GoroutinesPerServer, 0.0)

	md := RenderHub([]HubResult{r}, []IdleResult{{Client: Supervised, N: 20}}, []MicroResult{{Name: "BenchmarkCatalogChange/x", NsPerOp: 1}}, nil)
	require.True(t, strings.HasPrefix(md, "## 8. Many servers in one hub"))
	require.Contains(t, md, "| 20 | off | hub |")
	require.Contains(t, md, "BenchmarkCatalogChange/x")
}

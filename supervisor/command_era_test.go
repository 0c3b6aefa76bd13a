package supervisor

import (
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommandKeepAliveOn2026: a stdio server that speaks 2026-07-28 (go-sdk
// v1.8.0's own, with the default Era) answers ping -32601; the keepalive
// takes that answer as life and goes on pinging, and a server that then
// hangs is found by it, killed and started again.
func TestCommandKeepAliveOn2026(t *testing.T) {
	requireProcFS(t)
	r := newStdioRig(t, Config{KeepAlive: 20 * time.Millisecond,
		Command: &Command{StopGrace: 50 * time.Millisecond, KillGrace: 50 * time.Millisecond}})
	r.sup.Start()
	r.ready()
	require.Equal(t, "2026-07-28", r.sup.InitializeResult().ProtocolVersion)
	gen := r.sup.Generation()
	pings := func() int {
		res, err := r.call("pings", nil)
		require.NoError(t, err)
		n, err := strconv.Atoi(res.Content[0].(*mcp.TextContent).Text)
		require.NoError(t, err)
		return n
	}
	for pings() < 3 { // pings answered -32601 go on
		require.NoError(t, r.ctx.Err(), "the keepalive stopped pinging")
	}
	assert.Equal(t, gen, r.sup.Generation(), "no session lost to an answered ping")

	go func() { _, _ = r.call("freeze", nil) }()
	e := r.waitEvent(KindProcessExited, "after sigkill")
	assert.Equal(t, gen, e.Generation)
	r.restarted(gen)
}

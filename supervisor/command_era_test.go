package supervisor

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/stdio"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommandKeepAliveOn2026: a stdio server that speaks 2026-07-28 (go-sdk
// v1.8.0's own, with the default Era) answers ping -32601; the keepalive
// takes that answer as life and goes on pinging, and a server that then
// hangs is found by it, killed and started again. A ping is bounded by the
// interval, on the real clock here (a real process answers it): 250 ms, so
// that a loaded machine's slow answer is no missed ping, where 20 ms lost
// the session about once in twenty runs under load.
func TestCommandKeepAliveOn2026(t *testing.T) {
	requireProcFS(t)
	r := newStdioRig(t, Config{
		Command:  &stdio.Command{StopGrace: 50 * time.Millisecond, KillGrace: 50 * time.Millisecond},
		Recovery: RecoveryConfig{KeepAlive: 250 * time.Millisecond},
	})
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
	e := r.waitEvent(events.KindProcessExited, "after sigkill")
	assert.Equal(t, gen, e.Generation)
	r.restarted(gen)
}

// TestCommandStrayResponseIsReported: responses to ids no request carried
// (go-sdk drops them without a word) are dropped and counted as stdout
// lines, each with an event naming the id; the session lives.
func TestCommandStrayResponseIsReported(t *testing.T) {
	r := newStdioRig(t, Config{Command: &stdio.Command{StopGrace: 50 * time.Millisecond}})
	r.sup.Start()
	r.ready()
	res, err := r.call("stray", nil)
	require.NoError(t, err)
	assert.Equal(t, "strayed", res.Content[0].(*mcp.TextContent).Text)
	_, err = r.call("echo", map[string]any{"text": "still here"})
	require.NoError(t, err)
	es, err := r.rec.WaitFor(r.ctx, func(es []events.Event) bool { return countKind(es, events.KindStdoutLineDropped) == 2 })
	require.NoError(t, err)
	var dropped []events.Event
	for _, e := range es {
		if e.Kind == events.KindStdoutLineDropped {
			dropped = append(dropped, e)
		}
	}
	assert.Equal(t, []string{"response", "response"}, []string{dropped[0].Why, dropped[1].Why})
	assert.Equal(t, []string{"987654", `"not-an-id"`}, []string{dropped[0].RequestID, dropped[1].RequestID})
	assert.Equal(t, `2 dropped in all; response; to id "not-an-id", a request never sent`, events.Summary(dropped[1]))
	assert.Equal(t, uint64(1), r.sup.Generation(), "no restart")
}

// TestCommandStrayResponseEventIsBounded: a response to an id of a
// megabyte, terminal escapes first, that no request carried is reported
// with the id in the event's RequestID, as JSON (escapes escaped) cut to
// 64 characters as the HTTP transport cuts one, and no Detail; the
// recording of the events as JSON lines reads back.
func TestCommandStrayResponseEventIsBounded(t *testing.T) {
	r := newStdioRig(t, Config{Command: &stdio.Command{StopGrace: 50 * time.Millisecond}})
	r.sup.Start()
	r.ready()
	_, err := r.call("strayid", map[string]any{"bytes": 1 << 20})
	require.NoError(t, err)
	e := r.waitEvent(events.KindStdoutLineDropped, "")
	assert.Empty(t, e.Detail, "mcpsup's own text is typed")
	assert.Zero(t, e.Bound)
	assert.True(t, strings.HasPrefix(e.RequestID, `"\u001b[2J`), "the id as JSON: %q", e.RequestID)
	assert.Equal(t, 64, utf8.RuneCountInString(e.RequestID))
	assert.Contains(t, events.Summary(e), "to id "+e.RequestID+", a request never sent")

	var rec bytes.Buffer
	lines := events.NewJSONLines(&rec)
	es := r.rec.Events()
	for _, e := range es {
		lines.Emit(e)
	}
	require.NoError(t, lines.Err())
	back, err := events.ReadJSONLines(&rec)
	require.NoError(t, err)
	require.Len(t, back, len(es))
	assert.Equal(t, 1, countKind(back, events.KindStdoutLineDropped))
}

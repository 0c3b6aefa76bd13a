package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
)

type secretValuer struct{}

func (secretValuer) LogValue() slog.Value {
	return slog.StringValue("dial https://user:pw@h.test/mcp?api_key=" + token)
}

type leakyStruct struct{ Header map[string][]string }

func TestRedactingHandler(t *testing.T) {
	var r events.Redactor
	r.AddSessionID(sessionID)
	var buf bytes.Buffer
	log := slog.New(events.RedactingHandler(&r, slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	log = log.With("session_id", "x") // a short id, named by its key
	log.WithGroup("g").Warn("keepalive ping failed (session ID: "+sessionID+")",
		"error", errors.New(`Post "https://user:***@h.test/mcp?token=`+token+`": EOF`),
		"Mcp-Session-Id", "shortid",
		"token", token,
		"headers", leakyStruct{Header: map[string][]string{"Authorization": {"Bearer " + token}}},
		"valuer", secretValuer{},
		"tools", []string{"search", "id " + sessionID},
		slog.Group("req", "Authorization", "Basic dXNlcjpwYXNz", "status", 404),
		"attempts", 3, "delay", 2*time.Second, "ok", false)

	out := buf.String()
	for _, secret := range []string{token, sessionID, "shortid", "user:", "dXNlcjpwYXNz", `"session_id":"x"`} {
		require.NotContains(t, out, secret)
	}
	var rec map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
	require.Equal(t, "keepalive ping failed (session ID: "+events.HashSessionID(sessionID)+")", rec["msg"])
	require.Equal(t, events.HashSessionID("x"), rec["session_id"])
	g := rec["g"].(map[string]any)
	require.Equal(t, events.HashSessionID("shortid"), g["Mcp-Session-Id"])
	require.Equal(t, events.Masked, g["token"])
	require.Equal(t, []any{"search", "id " + events.HashSessionID(sessionID)}, g["tools"], "a []string stays a list")
	require.Equal(t, map[string]any{"Authorization": events.Masked, "status": float64(404)}, g["req"])
	require.Equal(t, float64(3), g["attempts"], "numbers are kept")
	require.Equal(t, float64(2*time.Second), g["delay"])
	require.Equal(t, false, g["ok"])
	require.True(t, strings.HasPrefix(g["error"].(string), `Post "https://[redacted]@h.test/mcp?token=[redacted]": EOF`), g["error"])
}

func TestRedactingHandlerKeepsHashesAndLevels(t *testing.T) {
	var buf bytes.Buffer
	h := events.RedactingHandler(nil, slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	require.False(t, h.Enabled(t.Context(), slog.LevelInfo), "levels are next's")
	sink := events.Slog(slog.New(h))
	sink.Emit(events.Event{Kind: events.KindCallFailed, SessionID: events.HashSessionID("abc"), Op: "tools/call"})
	require.Contains(t, buf.String(), "session_id="+events.HashSessionID("abc"), "a hash is not hashed again")
	require.Contains(t, buf.String(), "op=tools/call")
}

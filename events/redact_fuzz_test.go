package events_test

import (
	"strings"
	"testing"

	"github.com/mcpsup/mcpsup/events"
)

// FuzzRedactorText: any text, with any id registered, is redacted without a
// panic, idempotently, and a registered id of at least MinSessionIDLen bytes
// never survives as a whole token.
func FuzzRedactorText(f *testing.F) {
	for _, s := range []string{
		"failed to connect (session ID: abc-123): session not found",
		`mismatching session IDs "a" and "b"`,
		"map[Authorization:[Bearer t] Mcp-Session-Id:[x]]",
		`Post "https://u:***@h/mcp?token=t&api_key=k": EOF`,
		`JSON-RPC -32000 "No valid session ID (session ID: Q7#2)": calling`,
		`{\"sessionId\":\"x\"}`,
	} {
		f.Add(s, "0123456789abcdef")
	}
	f.Fuzz(func(t *testing.T, text, id string) {
		var r events.Redactor
		r.AddSessionID(id)
		red := r.Text(text)
		if again := r.Text(red); again != red {
			t.Fatalf("not idempotent:\n in    %q\n once  %q\n twice %q", text, red, again)
		}
		madeByRedaction := strings.Contains(events.Masked, id) || strings.Contains(events.HashSessionID(id), id) || strings.HasPrefix(id, "sid:")
		if len(id) >= events.MinSessionIDLen && !madeByRedaction && tokenIn(red, id) {
			t.Fatalf("registered id %q survived in %q", id, red)
		}
	})
}

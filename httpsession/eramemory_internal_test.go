package httpsession

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/session"
)

func refusal(code int64) *Exchange {
	return &Exchange{Method: "server/discover", Status: 400, RPC: classify.RPCError{Present: true, Code: code}}
}

// The era rules, one at a time, on explicit times.
func TestEraMemory(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m := newEraMemory(EraAuto, 10*time.Minute)
	era, fallback := m.next(t0)
	require.Equal(t, EraAuto, era)
	require.False(t, fallback)

	// A refused discover: 2025 for the period, one event.
	require.Equal(t, &session.EraChanged{To: "2025-11-25", Why: session.EraDiscoverRefused, Method: "server/discover", Status: 400, Code: -32022},
		m.learn(t0, "2025-11-25", refusal(-32022)))
	era, _ = m.next(t0.Add(10*time.Minute - time.Nanosecond))
	require.Equal(t, Era2025, era, "within the period")
	require.Empty(t, m.learn(t0, "2025-11-25", nil), "no change, no event")
	era, _ = m.next(t0.Add(10 * time.Minute))
	require.Equal(t, EraAuto, era, "probed again after the period")
	require.Equal(t, &session.EraChanged{From: "2025-11-25", To: "2026-07-28", Why: session.EraDiscoverAnswered, Method: "server/discover"},
		m.learn(t0.Add(10*time.Minute), "2026-07-28", &Exchange{Status: 200}))
	era, _ = m.next(t0.Add(time.Hour))
	require.Equal(t, Era20260728, era)

	// A discover answered with a result that offers only 2025 versions
	// (go-sdk's server by default) was not refused: the event says so.
	m2 := newEraMemory(EraAuto, 0)
	require.Equal(t, &session.EraChanged{To: "2025-11-25", Why: session.EraDiscoverUnsupported, Method: "server/discover", Status: 200},
		m2.learn(t0, "2025-11-25", &Exchange{Method: "server/discover", Status: 200}))

	// Outages: three let no fallback through, the fourth may; a failure of
	// another kind starts over.
	outage := &DiscoverOutageError{Discover: Exchange{Status: 502}}
	for range maxDiscoverOutages {
		_, fallback = m.next(t0)
		require.False(t, fallback)
		m.dialFailed(EraAuto, fmt.Errorf("connect: %w", outage))
	}
	_, fallback = m.next(t0)
	require.True(t, fallback)
	m.dialFailed(EraAuto, fmt.Errorf("connect: %w", classify.ErrCredential))
	_, fallback = m.next(t0)
	require.False(t, fallback, "the let-through fallback failed as well: start over")

	// A live refusal: once per period.
	require.True(t, m.refused(t0, true))
	require.False(t, m.refused(t0.Add(time.Minute), true))
	require.True(t, m.refused(t0.Add(10*time.Minute), true))
	// A session still opening: every time (each is a connect attempt).
	require.True(t, m.refused(t0.Add(11*time.Minute), false))
	require.True(t, m.refused(t0.Add(11*time.Minute), false))
	era, _ = m.next(t0.Add(11 * time.Minute))
	require.Equal(t, EraAuto, era, "the next session discovers")
}

// The host's Era2025 is kept for good; a negative EraReprobe keeps a
// fallback for good.
func TestEraMemoryPinned(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m := newEraMemory(Era2025, time.Minute)
	m.learn(t0, "2025-11-25", nil)
	era, _ := m.next(t0.Add(24 * time.Hour))
	require.Equal(t, Era2025, era)

	m = newEraMemory(EraAuto, -1)
	m.learn(t0, "2025-11-25", refusal(-32601))
	era, _ = m.next(t0.Add(24 * time.Hour))
	require.Equal(t, Era2025, era)
}

// Only -32022 refuses a live session's era; -32020 and -32021 refuse one
// request.
func TestVersionRefusalIsOnly32022(t *testing.T) {
	for code, want := range map[int64]bool{-32022: true, -32021: false, -32020: false, -32601: false} {
		require.Equal(t, want, VersionRefusal(*refusal(code)), "code %d", code)
		require.Equal(t, code != -32601, EraRefusal(*refusal(code)), "code %d", code)
	}
}

// A 2025 era that was learned ends at once when the server refuses its
// handshake with an error of a later era (MCP 2026-07-28
// basic/transports/streamable-http.mdx, "Backward Compatibility": "If the
// body contains a recognized modern JSON-RPC error, the server speaks a
// modern version of MCP"); the host's Era2025 never does, and neither does
// a refusal that names one request, nor a handshake of another era.
func TestEraMemoryLegacyRefusal(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	handshake := func(status int, code int64) error {
		return fmt.Errorf("connect: %w", &classify.HTTPError{Exchange: Exchange{Verb: "POST", Method: "initialize", Status: status,
			RPC: classify.RPCError{Present: true, Code: code}}})
	}
	learned := func() *eraMemory {
		m := newEraMemory(EraAuto, 10*time.Minute)
		m.learn(t0, "2025-11-25", refusal(-32022))
		era, _ := m.next(t0)
		require.Equal(t, Era2025, era)
		return m
	}

	m := learned()
	require.Equal(t, &session.EraChanged{From: "2025-11-25", Why: session.EraRefusedOpening, Method: "initialize", Status: 400, Code: -32022},
		m.dialFailed(Era2025, handshake(400, -32022)))
	era, _ := m.next(t0)
	require.Equal(t, EraAuto, era, "discovers at once, within the period")

	m = learned()
	require.NotEmpty(t, m.dialFailed(Era2025, handshake(404, -32601)), "initialize not implemented")
	m = learned()
	require.Empty(t, m.dialFailed(Era2025, handshake(400, -32021)), "one request's capability")
	require.Empty(t, m.dialFailed(Era2025, handshake(503, 0)), "an outage")
	require.Empty(t, m.dialFailed(EraAuto, handshake(400, -32022)), "go-sdk's fallback of a discover: nothing learned to end")
	era, _ = m.next(t0)
	require.Equal(t, Era2025, era)

	pinned := newEraMemory(Era2025, 0)
	require.Empty(t, pinned.dialFailed(Era2025, handshake(400, -32022)))
	require.False(t, pinned.refused(t0, false))
	era, _ = pinned.next(t0)
	require.Equal(t, Era2025, era, "the host's Era2025 is kept for good")
}

// The answers that tell a 2025-era request's server speaks a later era.
func TestLegacyRefusal(t *testing.T) {
	for _, tc := range []struct {
		method string
		status int
		code   int64
		want   bool
	}{
		{"tools/list", 400, -32022, true},
		{"initialize", 400, -32020, true},
		{"tools/call", 400, -32020, true},
		{"tools/call", 400, -32021, false},
		{"initialize", 404, -32601, true},
		{"tools/list", 404, -32601, false},
		{"tools/list", 400, -32000, false},
		{"tools/list", 500, -32022, false},
	} {
		x := Exchange{Method: tc.method, Status: tc.status, RPC: classify.RPCError{Present: true, Code: tc.code}}
		require.Equal(t, tc.want, LegacyRefusal(x), "%+v", tc)
	}
	require.False(t, LegacyRefusal(Exchange{Method: "initialize", Status: 400}), "a 400 without a JSON-RPC error is no modern error")
}

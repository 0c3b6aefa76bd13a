package supervisor

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/wire"
)

func refusal(code int64) *wire.Exchange {
	return &wire.Exchange{Method: "server/discover", Status: 400, RPC: classify.RPCError{Present: true, Code: code}}
}

// The era rules, one at a time, on explicit times.
func TestEraMemory(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m := newEraMemory(Config{EraReprobe: 10 * time.Minute})
	era, fallback := m.next(t0)
	require.Equal(t, wire.EraAuto, era)
	require.False(t, fallback)

	// A refused discover: 2025 for the period, one event.
	require.Contains(t, m.learn(t0, "2025-11-25", refusal(-32022)), "JSON-RPC -32022")
	era, _ = m.next(t0.Add(10*time.Minute - time.Nanosecond))
	require.Equal(t, wire.Era2025, era, "within the period")
	require.Empty(t, m.learn(t0, "2025-11-25", nil), "no change, no event")
	era, _ = m.next(t0.Add(10 * time.Minute))
	require.Equal(t, wire.EraAuto, era, "probed again after the period")
	require.Contains(t, m.learn(t0.Add(10*time.Minute), "2026-07-28", &wire.Exchange{Status: 200}), "2026-07-28")
	era, _ = m.next(t0.Add(time.Hour))
	require.Equal(t, wire.Era20260728, era)

	// A discover answered with a result that offers only 2025 versions
	// (go-sdk's server by default) was not refused: the event says so.
	m2 := newEraMemory(Config{})
	detail := m2.learn(t0, "2025-11-25", &wire.Exchange{Method: "server/discover", Status: 200})
	require.Contains(t, detail, "without 2026-07-28 among its supportedVersions")
	require.NotContains(t, detail, "refused")

	// Outages: three let no fallback through, the fourth may; a failure of
	// another kind starts over.
	outage := &wire.DiscoverOutageError{Discover: wire.Exchange{Status: 502}}
	for range maxDiscoverOutages {
		_, fallback = m.next(t0)
		require.False(t, fallback)
		m.dialFailed(fmt.Errorf("connect: %w", outage))
	}
	_, fallback = m.next(t0)
	require.True(t, fallback)
	m.dialFailed(fmt.Errorf("connect: %w", classify.ErrCredential))
	_, fallback = m.next(t0)
	require.False(t, fallback, "the let-through fallback failed as well: start over")

	// A live refusal: once per period.
	require.True(t, m.liveRefusal(t0))
	require.False(t, m.liveRefusal(t0.Add(time.Minute)))
	require.True(t, m.liveRefusal(t0.Add(10*time.Minute)))
}

// The host's Era2025 is kept for good; a negative EraReprobe keeps a
// fallback for good.
func TestEraMemoryPinned(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m := newEraMemory(Config{Era: Era2025, EraReprobe: time.Minute})
	m.learn(t0, "2025-11-25", nil)
	era, _ := m.next(t0.Add(24 * time.Hour))
	require.Equal(t, wire.Era2025, era)

	m = newEraMemory(Config{EraReprobe: -1})
	m.learn(t0, "2025-11-25", refusal(-32601))
	era, _ = m.next(t0.Add(24 * time.Hour))
	require.Equal(t, wire.Era2025, era)
}

// Only -32022 refuses a live session's era; -32020 and -32021 refuse one
// request.
func TestVersionRefusalIsOnly32022(t *testing.T) {
	for code, want := range map[int64]bool{-32022: true, -32021: false, -32020: false, -32601: false} {
		require.Equal(t, want, wire.VersionRefusal(*refusal(code)), "code %d", code)
		require.Equal(t, code != -32601, wire.EraRefusal(*refusal(code)), "code %d", code)
	}
}

package supervisor_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/supervisor"
)

// replacingWriter replaces old with new in what it writes.
type replacingWriter struct {
	http.ResponseWriter
	old, new []byte
}

func (w replacingWriter) Write(b []byte) (int, error) {
	_, err := w.ResponseWriter.Write(bytes.ReplaceAll(b, w.old, w.new))
	return len(b), err
}
func (w replacingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// hostileTTLServer is a 2026-07-28 go-sdk server whose list results carry
// the raw JSON ttl as their ttlMs; it counts the tools/list requests.
func hostileTTLServer(t *testing.T, ttl string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	const marker = 987654321
	return cacheableServer(t, msOf(marker), func(w http.ResponseWriter) http.ResponseWriter {
		return replacingWriter{w, []byte(`"ttlMs":987654321`), []byte(`"ttlMs":` + ttl)}
	})
}

// A list result whose ttlMs go-sdk cannot decode into an int (fractional,
// exponent, out of range, not a number) costs neither the listing nor the
// catalog: a number is truncated and clamped (the supervisor caps it at a
// day), anything else is no hint.
func TestE2EListTTLHostileHintKeepsTheCatalog(t *testing.T) {
	for _, c := range []struct {
		ttl   string
		armed bool          // a ttl timer re-lists within a day
		due   time.Duration // when: Config.Limits.MinListTTL's floor, or the day's cap
	}{
		{"1", true, supervisor.DefaultMinListTTL}, {"0", false, 0}, {"-5", false, 0}, {"null", false, 0},
		{"99999999999999999999", true, 24 * time.Hour}, {"1.5", true, supervisor.DefaultMinListTTL},
		{"1e30", true, 24 * time.Hour}, {"-1e30", false, 0}, {`"x"`, false, 0}, {"{}", false, 0},
	} {
		t.Run(c.ttl, func(t *testing.T) {
			ts, lists := hostileTTLServer(t, c.ttl)
			sup, clock, ctx := readyOnFakeClock(t, ts)
			require.Len(t, sup.Catalog().Tools, 1)
			require.Equal(t, int64(1), lists.Load())
			if !c.armed {
				require.False(t, timerArmed(ctx, clock), "no hint, no ttl timer")
				return
			}
			require.NoError(t, clock.BlockUntilContext(ctx, 1), "the ttl timer")
			clock.Advance(c.due - time.Millisecond)
			require.Equal(t, int64(1), lists.Load(), "not before the floored or capped ttl ran out")
			clock.Advance(time.Millisecond)
			require.Eventually(t, func() bool { return lists.Load() == 2 }, e2eTimeout, time.Millisecond, "one re-list at the floored or capped ttl")
			require.Equal(t, supervisor.Ready, sup.State())
		})
	}
}

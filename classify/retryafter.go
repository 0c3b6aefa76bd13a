package classify

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRetryAfter caps every Retry-After (a longer one is this, never "none"):
// the one cap, for the verdict, the call's error and the rate-limit window.
const MaxRetryAfter = time.Hour

// ParseRetryAfter parses a Retry-After value (RFC 9110 section 10.2.3)
// received at now: delay-seconds or an HTTP-date in its three forms (section
// 5.6.7). It returns the wait in whole seconds, a date's rounded up, at most
// [MaxRetryAfter]; 0 for an empty or malformed value, 0 seconds, or a date
// not in the future.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	// ParseUint takes digits only; past its range it gives its maximum.
	if n, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return time.Duration(min(n, uint64(MaxRetryAfter/time.Second))) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	d := min(at.Sub(now), MaxRetryAfter) // Sub saturates for dates centuries away
	if d <= 0 {
		return 0
	}
	return (d + time.Second - 1).Truncate(time.Second) // round up
}

// CapRetryAfter bounds any Retry-After to [0, MaxRetryAfter]; Classify
// applies it to every verdict.
func CapRetryAfter(d time.Duration) time.Duration {
	return min(max(d, 0), MaxRetryAfter)
}

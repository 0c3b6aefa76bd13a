package classify

import (
	"net/http"
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
	if v == "" {
		return 0
	}
	if isDigits(v) {
		return secondsCapped(v)
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	d := at.Sub(now) // saturates for dates centuries away
	if d <= 0 {
		return 0
	}
	if d >= MaxRetryAfter {
		return MaxRetryAfter
	}
	return (d + time.Second - 1).Truncate(time.Second) // round up; d < MaxRetryAfter, so no overflow
}

// CapRetryAfter bounds any Retry-After to [0, MaxRetryAfter]; Classify
// applies it to every verdict.
func CapRetryAfter(d time.Duration) time.Duration {
	return min(max(d, 0), MaxRetryAfter)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// secondsCapped reads delay-seconds, stopping at the cap: no overflow.
func secondsCapped(digits string) time.Duration {
	const maxSecs = int64(MaxRetryAfter / time.Second)
	var n int64
	for i := 0; i < len(digits); i++ {
		n = n*10 + int64(digits[i]-'0')
		if n >= maxSecs {
			return MaxRetryAfter
		}
	}
	return time.Duration(n) * time.Second
}

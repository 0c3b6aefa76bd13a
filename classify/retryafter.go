package classify

import (
	"net/http"
	"strings"
	"time"
)

// MaxRetryAfter caps every Retry-After: a longer wait, in either form, is
// taken as MaxRetryAfter, never as "none". An hour covers hourly request
// budgets; a server cannot hold a host's calls off longer with one answer.
// It is the only cap: the verdict, the error a call returns, the
// rate-limit-window event and the window itself all carry the same value.
const MaxRetryAfter = time.Hour

// ParseRetryAfter parses the value of a Retry-After header (RFC 9110 section
// 10.2.3) received at now: delay-seconds (1*DIGIT) or an HTTP-date in any of
// the three forms a recipient must accept (IMF-fixdate, RFC 850, asctime;
// RFC 9110 section 5.6.7). It returns the wait in whole seconds (a date's
// remainder rounded up, so the wait never ends before the date), at most
// [MaxRetryAfter]. It returns 0, meaning "no Retry-After", for an empty or
// malformed value (a sign, a fraction, other text), for 0 seconds and for a
// date that is not in the future. Digits too many for any integer are a
// huge delay, capped like any other.
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

// CapRetryAfter bounds a Retry-After that did not come from
// [ParseRetryAfter] (a host's own *HTTPError, say) the same way: negative
// is 0, longer than [MaxRetryAfter] is MaxRetryAfter. Classify applies it to
// every verdict.
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

// secondsCapped reads delay-seconds, stopping as soon as the value reaches
// the cap so that no length of digits can overflow.
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

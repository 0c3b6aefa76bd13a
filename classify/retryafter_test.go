package classify_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	for _, c := range []struct {
		name, in string
		want     time.Duration
	}{
		{"seconds", "7", 7 * time.Second},
		{"seconds with spaces", " 120 ", 2 * time.Minute},
		{"leading zeros", "007", 7 * time.Second},
		{"zero", "0", 0},
		{"just under the cap", "3599", 3599 * time.Second},
		{"the cap", "3600", classify.MaxRetryAfter},
		{"above a year is capped, not 0", "31536001", classify.MaxRetryAfter},
		{"overflows int64", "99999999999999999999999999999999", classify.MaxRetryAfter},
		{"negative", "-5", 0},
		{"plus sign", "+5", 0},
		{"fraction", "1.5", 0},
		{"garbage", "soon", 0},
		{"digits then text", "5s", 0},
		{"empty", "", 0},
		{"IMF-fixdate", "Wed, 21 Oct 2015 07:28:30 GMT", 30 * time.Second},
		{"RFC 850 date", "Wednesday, 21-Oct-15 07:29:00 GMT", time.Minute},
		{"asctime date", "Wed Oct 21 07:28:45 2015", 45 * time.Second},
		{"date now", "Wed, 21 Oct 2015 07:28:00 GMT", 0},
		{"past date", "Wed, 21 Oct 2015 07:27:59 GMT", 0},
		{"far-future date is capped", "Fri, 31 Dec 9999 23:59:59 GMT", classify.MaxRetryAfter},
		{"date beyond the cap", "Wed, 21 Oct 2015 09:28:00 GMT", classify.MaxRetryAfter},
		{"malformed date", "Wed, 32 Oct 2015 07:28:30 GMT", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, classify.ParseRetryAfter(c.in, now))
		})
	}
}

func TestParseRetryAfterRoundsADateUp(t *testing.T) {
	now := time.Date(2015, 10, 21, 7, 28, 0, 400*int(time.Millisecond), time.UTC)
	// 29.6s away: the wait must not end before the date.
	require.Equal(t, 30*time.Second, classify.ParseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now))
}

func TestClassifyCapsRetryAfter(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{
		24 * time.Hour:    classify.MaxRetryAfter,
		-time.Second:      0,
		30 * time.Second:  30 * time.Second,
		time.Duration(-1): 0,
	} {
		v := classify.Classify(context.Background(), &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 429, RetryAfter: in}})
		require.Equal(t, classify.RateLimited, v.Class)
		require.Equal(t, want, v.RetryAfter, "from %v", in)
	}
}

func ExampleParseRetryAfter() {
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	fmt.Println(classify.ParseRetryAfter("120", now))
	fmt.Println(classify.ParseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now))
	fmt.Println(classify.ParseRetryAfter("86400", now)) // capped
	fmt.Println(classify.ParseRetryAfter("soon", now))  // not a Retry-After
	// Output:
	// 2m0s
	// 30s
	// 1h0m0s
	// 0s
}

// FuzzParseRetryAfter: any header value gives a wait in whole seconds
// between 0 and MaxRetryAfter, without a panic.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "-1", "99999999999999999999", "Wed, 21 Oct 2015 07:28:30 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "Wed Oct 21 07:28:45 2015", "soon"} {
		f.Add(s)
	}
	now := time.Date(2015, 10, 21, 7, 28, 0, 400, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d := classify.ParseRetryAfter(v, now)
		if d < 0 || d > classify.MaxRetryAfter || d%time.Second != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v", v, d)
		}
	})
}

func ExampleCapRetryAfter() {
	fmt.Println(classify.CapRetryAfter(48 * time.Hour))
	fmt.Println(classify.CapRetryAfter(-time.Second))
	// Output:
	// 1h0m0s
	// 0s
}

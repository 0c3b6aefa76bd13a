package events

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The fast path of escapedForms (an id of unreserved characters is its only
// form) gives what every escaping gives, and any other id takes the slow one.
func TestEscapedFormsFastPathAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(
			rapid.StringMatching(`[A-Za-z0-9._~-]{1,40}`),
			rapid.String(),
		).Draw(t, "id")
		if got, want := escapedForms(s), everyForm(s); !slices.Equal(got, want) {
			t.Fatalf("escapedForms(%q) = %q, want %q", s, got, want)
		}
	})
}

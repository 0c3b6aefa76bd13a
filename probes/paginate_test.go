package probes

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endless returns steps that always hand out a new cursor.
func endless(n int) []step {
	s := make([]step, n)
	for i := range s {
		s[i] = step{n: 1, next: fmt.Sprintf("c%d", i+1)}
	}
	return s
}

func paginationErr(t *testing.T, err error) *PaginationError {
	t.Helper()
	var pe *PaginationError
	require.True(t, errors.As(err, &pe), "error %v is not a *PaginationError", err)
	return pe
}

func TestPaginationPageLimitOnTools(t *testing.T) {
	f := newFake().script(Tools, endless(10)...)

	cat, err := ProbeBlind(t.Context(), f, Options{MaxPages: 3})
	le := listErr(t, err)
	assert.Equal(t, Tools, le.List)
	// DESIGN.md Bounds: MaxPages "as MaxItems": protocol, the server broke the bound.
	assert.Equal(t, classify.Protocol, le.Verdict.Class, "%v", err)
	pe := paginationErr(t, err)
	assert.ErrorIs(t, err, ErrPageLimit)
	assert.Equal(t, Tools, pe.List)
	assert.Equal(t, 3, pe.Pages)
	assert.Equal(t, 3, f.count(Tools), "no request past the cap")
	assert.Contains(t, err.Error(), "tools/list: page limit reached after 3 pages")
	assert.Equal(t, Failed, cat.Report.Get(Tools).Status)
	assert.Equal(t, 3, cat.Report.Get(Tools).Pages)
}

func TestPaginationDefaultPageLimit(t *testing.T) {
	f := newFake().script(Prompts, endless(DefaultMaxPages+5)...)

	cat, err := ProbeBlind(t.Context(), f, Options{})
	require.NoError(t, err, "a speculative list hitting the cap degrades")
	assert.Equal(t, DefaultMaxPages, f.count(Prompts))
	r := cat.Report.Get(Prompts)
	assert.Equal(t, Degraded, r.Status)
	assert.Contains(t, r.Verdict.Detail, "prompts/list: page limit reached")
	assert.Empty(t, cat.Prompts)
}

func TestPaginationRepeatedCursor(t *testing.T) {
	f := newFake().script(Tools, step{n: 1, next: "a"}, step{n: 1, next: "b"}, step{n: 1, next: "a"})

	_, err := ProbeBlind(t.Context(), f, Options{})
	require.ErrorIs(t, err, ErrCursorRepeated)
	assert.Equal(t, classify.Protocol, listErr(t, err).Verdict.Class, "%v", err)
	pe := paginationErr(t, err)
	assert.Equal(t, 3, pe.Pages)
	assert.Equal(t, "a", pe.Cursor)
	assert.Equal(t, 3, f.count(Tools))
	assert.Equal(t, []string{"", "a", "b"}, []string{f.calls0(Tools)[0].cursor, f.calls0(Tools)[1].cursor, f.calls0(Tools)[2].cursor})
}

func TestPaginationCursorEqualToCurrent(t *testing.T) {
	f := newFake().script(Resources, step{n: 1, next: "x"}, step{n: 1, next: "x"})

	cat, err := ProbeBlind(t.Context(), f, Options{})
	require.NoError(t, err)
	assert.Equal(t, 2, f.count(Resources))
	assert.Equal(t, Degraded, cat.Report.Get(Resources).Status)
}

// DESIGN.md Bounds: past Config.Limits.MaxItems a page is protocol, and so
// is a whole list over several pages: one rule for both.
func TestPaginationItemLimit(t *testing.T) {
	f := newFake().script(Tools, step{n: 3, next: "a"}, step{n: 3, next: "b"}, step{n: 3})

	_, err := ProbeBlind(t.Context(), f, Options{MaxItems: 5})
	require.ErrorIs(t, err, ErrItemLimit)
	assert.Equal(t, classify.Protocol, listErr(t, err).Verdict.Class, "%v", err)
	assert.ErrorIs(t, err, classify.ErrProtocol)
	pe := paginationErr(t, err)
	assert.Equal(t, 2, pe.Pages)
	assert.Equal(t, 6, pe.Items)
	assert.Equal(t, 2, f.count(Tools))

	f = newFake().script(Tools, step{n: 3, next: "a"}, step{n: 2})
	cat, err := ProbeBlind(t.Context(), f, Options{MaxItems: 5})
	require.NoError(t, err, "exactly the limit is accepted")
	assert.Len(t, cat.Tools, 5)
}

// TestPaginationKeepsNoCursorWhole: a server's cursors are as long as it
// likes; the cursors a list has seen are remembered by hash, so 50 pages
// of 1 MiB cursors hold about one of them, not 50 MiB, while the list
// runs (the live heap after a collection, on the 50th page).
func TestPaginationKeepsNoCursorWhole(t *testing.T) {
	const pages, size = 50, 1 << 20
	live := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	var base, grown int64
	n := 0
	page := func(_ context.Context, cursor string) ([]int, string, error) {
		n++
		switch n {
		case 1:
			base = live()
		case pages:
			grown = live() - base
			return []int{n}, "", nil
		}
		return []int{n}, strings.Repeat("c", size) + strconv.Itoa(n), nil
	}
	var items []int
	got, _, err := walk(t.Context(), Tools, page, &items, Options{}.withDefaults())
	require.NoError(t, err)
	require.Equal(t, pages, got)
	require.Len(t, items, pages)
	require.Less(t, grown, int64(8<<20), "bytes held on the last page")
}

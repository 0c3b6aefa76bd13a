package events_test

import (
	"bufio"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

func TestReadJSONLinesErrors(t *testing.T) {
	in := `{"v":1,"kind":"transition","server":"a"}` + "\n\n" + `{"v":2,"kind":"transition"}` + "\n"
	evs, err := events.ReadJSONLines(strings.NewReader(in))
	var le *events.LineError
	require.ErrorAs(t, err, &le)
	require.Equal(t, 3, le.Line, "blank lines count")
	require.ErrorIs(t, err, events.ErrVersion)
	require.Len(t, evs, 1, "events before the bad line are returned")

	_, err = events.ReadJSONLines(strings.NewReader("{\"v\":1}\nnot json\n"))
	require.ErrorAs(t, err, &le)
	require.Equal(t, 2, le.Line)

	long := `{"v":1,"detail":"` + strings.Repeat("x", events.MaxLineBytes) + `"}`
	_, err = events.ReadJSONLines(strings.NewReader(long))
	require.ErrorAs(t, err, &le)
	require.Equal(t, 1, le.Line)

}

// TestReadJSONLinesBoundIsTheLinesBytes: a line of MaxLineBytes bytes is
// read, before a line break and at the end of the stream; one byte more is a
// bad line, and bufio.ErrTooLong says why.
func TestReadJSONLinesBoundIsTheLinesBytes(t *testing.T) {
	line := func(n int) string {
		head, tail := `{"v":1,"kind":"transition","detail":"`, `"}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	atBound := line(events.MaxLineBytes)
	require.Len(t, atBound, events.MaxLineBytes)
	for _, in := range []string{atBound + "\n" + atBound + "\n", atBound + "\n" + atBound} {
		evs, err := events.ReadJSONLines(strings.NewReader(in))
		require.NoError(t, err)
		require.Len(t, evs, 2)
	}
	for _, in := range []string{line(events.MaxLineBytes+1) + "\n", line(events.MaxLineBytes + 1)} {
		_, err := events.ReadJSONLines(strings.NewReader(in))
		var le *events.LineError
		require.ErrorAs(t, err, &le)
		require.Equal(t, 1, le.Line)
		require.ErrorIs(t, err, bufio.ErrTooLong)
	}
}

func TestSummaryNamesEveryListsChange(t *testing.T) {
	got := events.Summary(events.Event{Kind: events.KindCatalogChanged, Tools: 1, Added: []string{"a"},
		Prompts:           &events.ListChange{Added: []string{"greet"}, Removed: []string{"old"}},
		ResourceTemplates: &events.ListChange{Changed: []string{"file:///{p}"}}})
	require.Contains(t, got, "1 tools: +a")
	require.Contains(t, got, "prompts: +greet -old")
	require.Contains(t, got, "resource templates: ~file:///{p}")
	require.NotContains(t, got, "resources:")
}

// A transport verdict's detail is a Go error chain whose cause comes last:
// the summary keeps the end of a long one, which says why, not its start,
// which repeats the method.
func TestSummaryKeepsTheCauseOfALongDetail(t *testing.T) {
	detail := `POST tools/call: no HTTP answer: calling "tools/call": sending "tools/call": rejected by transport: ` +
		`Post "http://127.0.0.1:18931/mcp": dial tcp 127.0.0.1:18931: connect: connection refused`
	got := events.Summary(events.Event{Kind: events.KindCallFailed, Op: "tools/call", Name: "greet",
		Verdict: classify.Verdict{Class: classify.Transport, Method: "tools/call", Detail: detail}})
	require.Contains(t, got, `connect: connection refused"`)
	require.Contains(t, got, `transport (tools/call) "...`)
	require.NotContains(t, got, "POST tools/call: no HTTP answer")

	short := events.Summary(events.Event{Kind: events.KindCallFailed, Op: "tools/call",
		Verdict: classify.Verdict{Class: classify.Transport, Detail: "EOF"}})
	require.Contains(t, short, `transport "EOF"`)

	// A cut never splits a rune.
	long := strings.Repeat("é", 100)
	got = events.Summary(events.Event{Kind: events.KindCallFailed, Op: "tools/call",
		Verdict: classify.Verdict{Class: classify.Transport, Detail: long}})
	require.True(t, utf8.ValidString(got), got)
}

// TestSummaryPrintsTypedFacts: the kinds fed by a transport's facts carry
// typed fields, and the text for people is made from them.
func TestSummaryPrintsTypedFacts(t *testing.T) {
	for _, c := range []struct {
		e    events.Event
		want string
	}{
		{events.Event{Kind: events.KindStreamDeclined, HTTPStatus: 405, ContentType: "text/plain"}, "HTTP 405 text/plain"},
		{events.Event{Kind: events.KindResponseDropped, Bound: 8, Count: 3}, "8 already in flight; 3 dropped in all"},
		{events.Event{Kind: events.KindServerRequestRefused, Op: "elicitation/create", Bound: 4, Count: 1},
			`"elicitation/create" refused: 4 already being handled; 1 refused in all`},
		{events.Event{Kind: events.KindStdoutLineDropped, Count: 2, Why: "not-jsonrpc"}, "2 dropped in all; not-jsonrpc"},
		{events.Event{Kind: events.KindStdoutLineDropped, Count: 1, Why: "oversized", Bound: 1024}, "1 dropped in all; oversized; longer than 1024 bytes"},
		{events.Event{Kind: events.KindStdoutLineDropped, Count: 3, Why: "response", RequestID: "7"}, "3 dropped in all; response; to id 7, a request never sent"},
		{events.Event{Kind: events.KindStreamEventDropped, Count: 4, Why: "malformed-line", Bytes: 31}, "4 dropped in all; malformed-line; 31 bytes"},
		{events.Event{Kind: events.KindStreamDisabled, Why: "get-hostile"}, "get-hostile"},
		{events.Event{Kind: events.KindProcessExited, ExitCode: 3, Detail: "fatal\n"}, `exited with code 3; stderr: fatal\x0a`},
		{events.Event{Kind: events.KindProcessExited, ExitCode: -1, Signal: 9, Stop: "sigkill"}, "ended by signal 9 (killed) after sigkill"},
		{events.Event{Kind: events.KindSessionVerified, Alive: true}, "answered: the session lives"},
		{events.Event{Kind: events.KindCallReissued, Op: "tools/call", Name: "r", RequestID: "3", ReissuedAs: "5"},
			`tools/call "r": request 3 lost with its response stream; re-issued as request 5`},
		{events.Event{Kind: events.KindSessionVerified, Verdict: classify.Verdict{Class: classify.Transport, Detail: "EOF"}},
			`not answered: the session ended (transport "EOF")`},
	} {
		require.Equal(t, c.want, events.Summary(c.e))
	}
}

// A kind events does not know (the hub's merged-catalog-changed) that names
// a list's changes by Op and Tools prints them from its typed fields.
func TestSummaryPrintsTheChangeOfAnotherKindsList(t *testing.T) {
	e := events.Event{Kind: "merged-catalog-changed", Op: "tools", Tools: 4, Added: []string{"a__record"}, Removed: []string{"b__old"}}
	require.Equal(t, "4 tools: +a__record -b__old", events.Summary(e))
}

// The hub's kinds print their typed facts: a lease's token and resumed
// session, a refused catalog's bound, a collision's names.
func TestSummaryPrintsAnotherKindsFacts(t *testing.T) {
	for _, c := range []struct {
		e    events.Event
		want string
	}{
		{events.Event{Kind: "lease-acquired", Token: 7, SessionID: "s:0123abcd"}, "token 7; s:0123abcd"},
		{events.Event{Kind: "lease-lost", Reason: "lease-taken", Detail: "fenced"}, "lease-taken; fenced"},
		{events.Event{Kind: "catalog-refused", Op: "items", Count: 4, Bound: 3}, "4 items, over 3"},
		{events.Event{Kind: "name-collision", Name: "a__x", Added: []string{"a__x_0123456789"}}, `"a__x"; +a__x_0123456789`},
		{events.Event{Kind: "name-collision", Omitted: 24}, "…24 more"},
		{events.Event{Kind: "server-added", Op: "standby"}, "standby"},
		{events.Event{Kind: "store-failed", Op: "save", Detail: "refused"}, "save; refused"},
	} {
		require.Equal(t, c.want, events.Summary(c.e))
	}
}

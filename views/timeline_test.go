package views_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/views"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./views -run %s -update to create it", t.Name())
	require.Equal(t, string(want), string(got), "golden file %s differs; rerun with -update if the change is intended", path)
}

func readRecorded(t *testing.T) []events.Event {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "recorded.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	evs, err := events.ReadJSONLines(f)
	require.NoError(t, err)
	return evs
}

func TestTimelineGolden(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, views.WriteTimeline(&out, readRecorded(t)))
	golden(t, "recorded.timeline.txt", out.Bytes())

	text := out.String()
	// One block per server, in order of first appearance.
	require.Equal(t, 4, strings.Count(text, "\n== ")+1)
	require.Less(t, strings.Index(text, "== s1-blind-resume"), strings.Index(text, "== s2-stale-session"))
	require.Contains(t, text, "== s4-tool-call-errors: 15 events, last state closed, generation 3")
	require.Contains(t, text, "ready (internal)")
	require.Contains(t, text, "(2 events dropped before this one)")
}

func TestMermaidGolden(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, views.WriteMermaid(&out, readRecorded(t)))
	golden(t, "recorded.mmd", out.Bytes())

	text := out.String()
	require.True(t, strings.HasPrefix(text, "stateDiagram-v2\n"))
	// The S4 server's path: two calls kept the session, one reconnected.
	require.Contains(t, text, "s4_tool_call_errors__ready --> s4_tool_call_errors__ready: call-failed x2\n")
	require.Contains(t, text, "s4_tool_call_errors__ready --> s4_tool_call_errors__connecting: call-failed\n")
	require.Contains(t, text, "s4_tool_call_errors__closed --> [*]")
	// A server with no transition (only a stream event) is not drawn.
	require.NotContains(t, text, "s5_get_hostile")
}

func TestMermaidIDsAreSafe(t *testing.T) {
	evs := []events.Event{
		{Kind: events.KindTransition, Server: "a-b", From: "idle", To: "connecting", Trigger: "started"},
		{Kind: events.KindTransition, Server: "a_b", From: "idle", To: "connecting", Trigger: "started: now"},
		{Kind: events.KindTransition, Server: "9 end", From: "idle", To: "connecting", Trigger: ""},
		{Kind: events.KindTransition, Server: "state", From: "idle", To: "connecting", Trigger: "x"},
	}
	var out bytes.Buffer
	require.NoError(t, views.WriteMermaid(&out, evs))
	text := out.String()
	require.Contains(t, text, "state a_b {")
	require.Contains(t, text, "state a_b_2 {", "a second server sanitizing to the same id gets its own box")
	require.Contains(t, text, "state s_9_end {")
	require.Contains(t, text, "state s_state {")
	require.Contains(t, text, "a_b_2__idle --> a_b_2__connecting: started  now\n", "a colon would end the label")
	require.Contains(t, text, ": (none)\n")
}

// LiveTimeline writes a line per event as it is emitted, times from the first.
func TestLiveTimeline(t *testing.T) {
	var out bytes.Buffer
	s := views.LiveTimeline(&out)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Emit(events.Event{Kind: events.KindTransition, Server: "srv", Seq: 1, Time: t0, From: "idle", To: "connecting", Trigger: "started"})
	s.Emit(events.Event{Kind: events.KindRetryScheduled, Server: "srv", Time: t0.Add(1500 * time.Millisecond), Attempt: 2, Delay: 3 * time.Second})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	require.Regexp(t, `^srv\s+\+0\.000s\s+#1\s+idle -> connecting\s+started$`, lines[0])
	require.Regexp(t, `^srv\s+\+1\.500s\s+retry-scheduled\s+attempt 2 in 3s$`, lines[1])
}

func TestWriteTimelineReportsWriteError(t *testing.T) {
	boom := errors.New("disk full")
	err := views.WriteTimeline(failingWriter{boom}, readRecorded(t))
	require.ErrorIs(t, err, boom)
	require.ErrorIs(t, views.WriteMermaid(failingWriter{boom}, readRecorded(t)), boom)
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// A server names its tools, and its error texts, as it likes; a recording
// file is anyone's. The timeline is read on a terminal: a line feed in a
// tool name forged a line of the timeline (a server block's header too),
// and an escape sequence reached the terminal. Every control character,
// and every invalid UTF-8 byte, of an event's text is written escaped, so
// one event is one line, and the text reads as it came.
func TestTimelineEscapesControlCharacters(t *testing.T) {
	hostile := "a\n== forged: 1 event, generation 9\n\x1b]0;pwned\x07\x1b[2J\r\u202etxt\x85\xff"
	evs := []events.Event{
		{Kind: events.KindCatalogChanged, Server: "srv\n== fake", Seq: 1, Tools: 1, Added: []string{hostile}},
		{Kind: events.KindCallFailed, Server: "srv\n== fake", Seq: 2, Op: "tools/call", Name: "x", Detail: hostile},
		{Kind: events.KindTransition, Server: "srv\n== fake", Seq: 3, From: events.State("ready\x1b[31m"), To: events.State("closed\x1b]0;pwned\x07\n== forged"), Trigger: events.Trigger("closed\nx")},
	}
	check := func(out string, lines int) {
		t.Helper()
		require.Len(t, strings.Split(strings.TrimSuffix(out, "\n"), "\n"), lines, "one line per event (and one header):\n%s", out)
		for _, r := range out {
			if r == '\n' {
				continue
			}
			require.False(t, r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x202e || r == utf8.RuneError,
				"%U written as it came:\n%q", r, out)
		}
		require.NotContains(t, out, "\n== forged")
	}
	var out bytes.Buffer
	require.NoError(t, views.WriteTimeline(&out, evs))
	check(out.String(), 4)
	require.Contains(t, out.String(), `+a\x0a== forged: 1 event, generation 9\x0a\x1b]0;pwned\x07\x1b[2J\x0d\u202etxt\x85\xff`,
		"the text reads as it came, escaped")
	out.Reset()
	live := views.LiveTimeline(&out)
	for _, e := range evs {
		live.Emit(e)
	}
	check(out.String(), 3)
	for _, e := range evs {
		check(events.Summary(e)+"\n", 1)
	}
}

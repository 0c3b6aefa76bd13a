package htmltimeline

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// hostile is text that would run script if a page parsed it as markup.
const hostile = `</script><img src=x onerror="document.body.setAttribute('data-pwned','1')"><!--`

func hostileEvents() []events.Event {
	v := classify.Verdict{Class: classify.Application, HTTPStatus: 400, Detail: hostile,
		RPC: classify.RPCError{Present: true, Code: -32602, Message: hostile, HasID: true}}
	return []events.Event{
		tr(hostile, 1, 0, "idle", "connecting", "started"),
		tr(hostile, 2, 10, "connecting", hostile, hostile),
		{Kind: events.KindCallFailed, Server: hostile, Seq: 3, Time: at(20), Op: hostile, Name: hostile,
			Delivery: hostile, Verdict: v, Detail: hostile},
		{Kind: hostile, Server: "plain", Seq: 1, Time: at(30), Detail: hostile},
		tr("constructor", 1, 40, "__proto__", "__proto__x", "toString"), // names a page's script might look up
	}
}

// embedded returns the content of the page's events element.
func embedded(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/x-ndjson" id="mcpsup-events">(.*?)</script>`).FindStringSubmatch(page)
	require.NotNil(t, m, "the page holds its events")
	return m[1]
}

func TestPageIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Write(&b, demoEvents(t)))
	page := b.String()
	require.True(t, strings.HasPrefix(page, "<!DOCTYPE html>"))
	for _, external := range []string{"src=", "href=", "<link", "@import", "url(http", "//cdn", "fetch(", "XMLHttpRequest", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write"} {
		require.NotContains(t, page, external)
	}
	require.Contains(t, page, `default-src 'none'`, "the page forbids loading anything")
	require.Contains(t, page, `data-live=""`, "a written page does not listen for live events")
}

func TestPageDataIsTheJSONForm(t *testing.T) {
	evs := append(demoEvents(t), hostileEvents()...)
	var b bytes.Buffer
	require.NoError(t, Write(&b, evs))
	back, err := events.ReadJSONLines(strings.NewReader(embedded(t, b.String())))
	require.NoError(t, err)
	require.Equal(t, evs, back, "the page holds the events' JSON lines, whatever their text")
}

func TestHostileTextStaysData(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Write(&b, hostileEvents()))
	page := b.String()
	require.Equal(t, 2, strings.Count(page, "</script>"), "only the page's own script elements end")
	require.NotContains(t, page, "<img")
	require.NotContains(t, embedded(t, page), "<")

	// A host's own lines, written by another encoder, may hold "<" raw.
	var raw bytes.Buffer
	require.NoError(t, writePage(&raw, []byte(`{"v":1,"kind":"transition","server":"`+strings.ReplaceAll(hostile, `"`, `\"`)+`"}`+"\n"), `/x"><img src=y>`))
	require.Equal(t, 2, strings.Count(raw.String(), "</script>"))
	require.NotContains(t, raw.String(), "<img")
	require.Contains(t, raw.String(), `data-live="/x&quot;&gt;&lt;img src=y&gt;"`)
}

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after <= 0 {
		return 0, errors.New("disk full")
	}
	w.after--
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	for after := range 7 { // each of the page's seven writes
		err := Write(&failingWriter{after: after}, demoEvents(t))
		require.EqualError(t, err, "disk full", "write %d fails", after)
	}

	var b bytes.Buffer
	bad := events.Event{Kind: events.KindCallFailed, Server: "s", Seq: 7, Verdict: classify.Verdict{Class: classify.Class(200)}}
	err := Write(&b, []events.Event{tr("s", 1, 0, "idle", "connecting", "started"), bad})
	require.ErrorContains(t, err, `htmltimeline: event 7 of "s"`)
	require.Zero(t, b.Len(), "nothing is written when an event cannot be marshalled")
}

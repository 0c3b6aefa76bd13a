package events_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

var t0 = time.Date(2026, 3, 14, 9, 26, 53, 123456789, time.UTC)

var rateLimited = classify.Verdict{Class: classify.RateLimited, HTTPStatus: 429, RetryAfter: 30 * time.Second,
	Method: "tools/call", SessionIDSent: true, Detail: "rejected by transport",
	RPC: classify.RPCError{Present: true, Code: -32005, Message: "rejected by transport", HasID: true}}

// oneOfEachKind has one fully populated event of every kind.
func oneOfEachKind() map[events.Kind]events.Event {
	base := events.Event{Server: "srv", Time: t0, Detail: "for people"}
	with := func(f func(*events.Event)) events.Event { e := base; f(&e); return e }
	return map[events.Kind]events.Event{
		events.KindTransition: with(func(e *events.Event) {
			e.Kind, e.Seq, e.From, e.To, e.Trigger, e.Guard = events.KindTransition, 7, "failed", "failed", "retries-exhausted", "retrying"
			e.Verdict, e.Generation, e.Attempt, e.Reason = rateLimited, 3, 5, "budget-spent"
		}),
		events.KindProbeReport: with(func(e *events.Event) {
			e.Kind, e.Generation = events.KindProbeReport, 1
			e.Lists = []events.ListOutcome{
				{List: "tools", Status: events.ListPresent, Items: 12},
				{List: "resources", Status: events.ListDegraded, Items: 1000, Warning: "pagination capped at 10 pages"},
				{List: "resource-templates", Status: events.ListAbsent, Verdict: classify.Verdict{Class: classify.MethodNotFound,
					HTTPStatus: 400, RPC: classify.RPCError{Present: true, Code: -32601, Message: "Method not found", HasID: true}}},
				{List: "prompts", Status: events.ListFailed, Verdict: classify.Verdict{Class: classify.Timeout, Detail: "context deadline exceeded"}},
			}
		}),
		events.KindCatalogChanged: with(func(e *events.Event) {
			e.Kind, e.Generation, e.Tools = events.KindCatalogChanged, 2, 3
			e.Added, e.Removed, e.Changed, e.Omitted = []string{"add"}, []string{"sub", "mul"}, []string{"echo"}, 4
			e.Prompts = &events.ListChange{Added: []string{"greet"}, Omitted: 2}
			e.Resources = &events.ListChange{Removed: []string{"file:///a.txt"}, Changed: []string{"file:///b.txt"}}
			e.ResourceTemplates = &events.ListChange{Added: []string{"file:///{path}"}}
		}),
		events.KindCallFailed: with(func(e *events.Event) {
			e.Kind, e.Op, e.Name, e.Delivery = events.KindCallFailed, "resources/read", "file:///a b.txt", events.DeliveryOutcomeUnknown
			e.Verdict, e.Generation = classify.Verdict{Class: classify.Transport, Detail: "EOF"}, 4
		}),
		events.KindStreamDisabled: with(func(e *events.Event) { e.Kind, e.Why = events.KindStreamDisabled, "get-hostile" }),
		events.KindStreamEnabled:  with(func(e *events.Event) { e.Kind, e.Why = events.KindStreamEnabled, "expired" }),
		events.KindStreamEventDropped: with(func(e *events.Event) {
			e.Kind, e.Generation, e.Count, e.Why, e.Bytes, e.Bound = events.KindStreamEventDropped, 3, 17, "oversized", 2048, 1024
		}),
		events.KindStreamDeclined: with(func(e *events.Event) {
			e.Kind, e.Generation, e.HTTPStatus, e.ContentType = events.KindStreamDeclined, 2, 405, "text/plain"
		}),
		events.KindServerRequestRefused: with(func(e *events.Event) {
			e.Kind, e.Generation, e.Op, e.Bound, e.Count = events.KindServerRequestRefused, 2, "sampling/createMessage", 4, 1
		}),
		events.KindProcessExited: with(func(e *events.Event) {
			e.Kind, e.Generation, e.ExitCode, e.Signal, e.Stop = events.KindProcessExited, 1, -1, 9, "sigkill"
		}),
		events.KindCallReissued: with(func(e *events.Event) {
			e.Kind, e.Op, e.Name, e.RequestID, e.ReissuedAs = events.KindCallReissued, "tools/call", "echo", "3", "5"
		}),
		events.KindSessionVerified: with(func(e *events.Event) {
			e.Kind, e.Generation, e.Alive = events.KindSessionVerified, 1, true
		}),
		events.KindRetryScheduled: with(func(e *events.Event) {
			e.Kind, e.Attempt, e.Delay, e.Verdict = events.KindRetryScheduled, 2, 1500*time.Millisecond+250*time.Microsecond+7, rateLimited
		}),
		events.KindRateLimitWindow: with(func(e *events.Event) {
			e.Kind, e.Delay, e.Verdict = events.KindRateLimitWindow, 30*time.Second, rateLimited
		}),
		events.KindSessionOpened: with(func(e *events.Event) {
			e.Kind, e.SessionID, e.Generation, e.Connection = events.KindSessionOpened, events.HashSessionID("abc"), 1, "conn:0a1b2c3d"
		}),
		events.KindSessionEnded: with(func(e *events.Event) {
			e.Kind, e.SessionID, e.Generation, e.Dropped = events.KindSessionEnded, events.HashSessionID("abc"), 1, 9
		}),
		"lease-acquired": with(func(e *events.Event) { // the hub's
			e.Kind, e.Token, e.SessionID = "lease-acquired", 42, events.HashSessionID("abc")
		}),
		events.KindEraChanged: with(func(e *events.Event) {
			e.Kind, e.Generation, e.EraFrom, e.EraTo, e.EraWhy = events.KindEraChanged, 2, "2026-07-28", "2025-11-25", "discover-refused"
			e.Op, e.HTTPStatus, e.RPCCode = "server/discover", 400, -32022
		}),
	}
}

func TestJSONRoundTripEveryKind(t *testing.T) {
	kinds := oneOfEachKind()
	require.Len(t, kinds, 18)
	for kind, e := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			require.Equal(t, kind, e.Kind)
			b, err := json.Marshal(e)
			require.NoError(t, err)
			var got events.Event
			require.NoError(t, json.Unmarshal(b, &got))
			require.Equal(t, e, got)

			again, err := json.Marshal(got)
			require.NoError(t, err)
			require.JSONEq(t, string(b), string(again))
		})
	}
}

// TestJSONRoundTripCoversEveryField fails when a field is added to Event,
// ListOutcome or a verdict without being set in oneOfEachKind, where
// TestJSONRoundTripEveryKind would not notice that the JSON form drops it.
func TestJSONRoundTripCoversEveryField(t *testing.T) {
	var values []reflect.Value
	for _, e := range oneOfEachKind() {
		values = append(values, reflect.ValueOf(e), reflect.ValueOf(e.Verdict), reflect.ValueOf(e.Verdict.RPC))
		for _, l := range e.Lists {
			values = append(values, reflect.ValueOf(l), reflect.ValueOf(l.Verdict), reflect.ValueOf(l.Verdict.RPC))
		}
	}
	set := map[string]bool{}
	for _, v := range values {
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				set[v.Type().Name()+"."+v.Type().Field(i).Name] = true
			}
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[events.Event](), reflect.TypeFor[events.ListOutcome](),
		reflect.TypeFor[classify.Verdict](), reflect.TypeFor[classify.RPCError]()} {
		for f := range typ.Fields() {
			require.True(t, set[typ.Name()+"."+f.Name], "no event of oneOfEachKind sets %s.%s", typ.Name(), f.Name)
		}
	}
}

func TestJSONFieldNames(t *testing.T) {
	b, err := json.Marshal(oneOfEachKind()[events.KindRetryScheduled])
	require.NoError(t, err)
	require.JSONEq(t, `{
		"v": 1, "kind": "retry-scheduled", "server": "srv", "time": "2026-03-14T09:26:53.123456789Z",
		"attempt": 2, "delay_ms": 1500.250007, "detail": "for people",
		"verdict": {"class": "rate-limited", "http_status": 429, "retry_after_ms": 30000, "method": "tools/call",
			"session_id_sent": true, "detail": "rejected by transport",
			"rpc": {"code": -32005, "message": "rejected by transport", "has_id": true}}
	}`, string(b))

	b, err = json.Marshal(events.Event{Kind: events.KindStreamEnabled})
	require.NoError(t, err)
	require.JSONEq(t, `{"v":1,"kind":"stream-enabled"}`, string(b), "zero fields are omitted, the zero verdict too")
}

func TestJSONTimeIsWrittenInUTC(t *testing.T) {
	local := t0.In(time.FixedZone("CET", 3600))
	b, err := json.Marshal(events.Event{Kind: events.KindTransition, Time: local})
	require.NoError(t, err)
	require.Contains(t, string(b), `"time":"2026-03-14T09:26:53.123456789Z"`)
	var got events.Event
	require.NoError(t, json.Unmarshal(b, &got))
	require.True(t, got.Time.Equal(local))
}

func TestJSONDurationsRoundTripExactly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.Int64().Draw(t, "ns"))
		ra := time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "retry_after"))
		e := events.Event{Kind: events.KindRetryScheduled, Delay: d,
			Verdict: classify.Verdict{Class: classify.RateLimited, RetryAfter: ra}}
		b, err := json.Marshal(e)
		require.NoError(t, err)
		var got events.Event
		require.NoError(t, json.Unmarshal(b, &got))
		require.Equal(t, e, got, "%s", b)
	})
}

func TestJSONReadsOtherNumberForms(t *testing.T) {
	for in, want := range map[string]time.Duration{
		`1e3`:       time.Second,
		`0.0000004`: 0,
		`0.0000006`: time.Nanosecond,
		`-2.5`:      -2500 * time.Microsecond,
		`"12"`:      12 * time.Millisecond,
	} {
		var e events.Event
		require.NoError(t, json.Unmarshal([]byte(`{"v":1,"delay_ms":`+in+`}`), &e), in)
		require.Equal(t, want, e.Delay, in)
	}
}

func TestJSONRejects(t *testing.T) {
	for name, in := range map[string]string{
		"missing version": `{"kind":"transition"}`,
		"newer version":   `{"v":2,"kind":"transition"}`,
		"bad time":        `{"v":1,"time":"yesterday"}`,
		"bad class":       `{"v":1,"verdict":{"class":"sleepy"}}`,
		"bad list class":  `{"v":1,"lists":[{"list":"tools","status":"failed","verdict":{"class":"?"}}]}`,
		"huge delay":      `{"v":1,"delay_ms":1e300}`,
		"not an object":   `[1]`,
	} {
		var e events.Event
		err := json.Unmarshal([]byte(in), &e)
		require.ErrorContains(t, err, "events:", name)
	}
	var e events.Event
	require.ErrorIs(t, json.Unmarshal([]byte(`{"v":2}`), &e), events.ErrVersion)
	require.ErrorContains(t, json.Unmarshal([]byte(`{"v":1,"lists":[{"verdict":{"class":"?"}}]}`), &e), "lists[0].verdict")
}

func TestJSONIgnoresUnknownFieldsAndKinds(t *testing.T) {
	var e events.Event
	require.NoError(t, json.Unmarshal([]byte(`{"v":1,"kind":"future-kind","shiny":true,"server":"a"}`), &e))
	require.Equal(t, events.Event{Kind: "future-kind", Server: "a"}, e)
}

func TestJSONMarshalRejectsInvalidClass(t *testing.T) {
	_, err := json.Marshal(events.Event{Verdict: classify.Verdict{Class: classify.Class(200)}})
	require.Error(t, err)
}

// BoundNames keeps MaxNames names, each within MaxNameBytes and valid
// UTF-8, and counts the rest; Omitted survives the JSON form and Redact.
func TestBoundNamesAndOmittedRoundTrip(t *testing.T) {
	names := make([]string, events.MaxNames+5)
	for i := range names {
		names[i] = fmt.Sprintf("t%03d", i)
	}
	names[0] = strings.Repeat("€", events.MaxNameBytes) // 3 bytes a rune
	kept, omitted := events.BoundNames(names)
	require.Len(t, kept, events.MaxNames)
	require.Equal(t, 5, omitted)
	require.LessOrEqual(t, len(kept[0]), events.MaxNameBytes)
	require.True(t, utf8.ValidString(kept[0]))
	require.True(t, strings.HasSuffix(kept[0], "…"))
	require.Equal(t, names[1:events.MaxNames], kept[1:])
	require.Equal(t, strings.Repeat("€", events.MaxNameBytes), names[0], "names is not modified")

	short := []string{"a", "b"}
	kept, omitted = events.BoundNames(short)
	require.Equal(t, short, kept)
	require.Zero(t, omitted)

	e := events.Event{Kind: events.KindCatalogChanged, Added: kept, Omitted: 7, Tools: 9,
		Prompts: &events.ListChange{Added: []string{"p"}, Omitted: 3}}
	b, err := e.MarshalJSON()
	require.NoError(t, err)
	var back events.Event
	require.NoError(t, back.UnmarshalJSON(b))
	require.Equal(t, 7, back.Omitted)
	require.Equal(t, 3, back.Prompts.Omitted)
	red := (&events.Redactor{}).Redact(back)
	require.Equal(t, 7, red.Omitted)
	require.Equal(t, 3, red.Prompts.Omitted)
	require.Contains(t, events.Summary(red), "…7 more")
	require.Contains(t, events.Summary(red), "…3 more")
}

// The JSON form stays byte for byte what testdata/every-kind.jsonl holds,
// written by an earlier version of this package (one event of every kind,
// in kind order): a recording reads back as it was, and one written now is
// the same bytes.
func TestJSONFormMatchesAnEarlierRecording(t *testing.T) {
	kinds := oneOfEachKind()
	var want []events.Event
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		want = append(want, kinds[k])
	}
	var now bytes.Buffer
	j := events.NewJSONLines(&now)
	for _, e := range want {
		j.Emit(e)
	}
	require.NoError(t, j.Err())
	if *updateJSON {
		require.NoError(t, os.WriteFile(filepath.Join("testdata", "every-kind.jsonl"), now.Bytes(), 0o644))
	}
	earlier, err := os.ReadFile(filepath.Join("testdata", "every-kind.jsonl"))
	require.NoError(t, err)
	require.Equal(t, string(earlier), now.String())
	got, err := events.ReadJSONLines(bytes.NewReader(earlier))
	require.NoError(t, err)
	require.Equal(t, want, got)
}

var updateJSON = flag.Bool("update", false, "rewrite testdata/every-kind.jsonl")

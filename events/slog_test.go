package events_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// capture is a slog.Handler that keeps records.
type capture struct {
	mu      sync.Mutex
	min     slog.Level
	records []slog.Record
}

func (c *capture) Enabled(_ context.Context, l slog.Level) bool { return l >= c.min }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, r.Clone())
	return nil
}
func (c *capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capture) WithGroup(string) slog.Handler      { return c }

func attrs(r slog.Record) map[string]slog.Value {
	m := map[string]slog.Value{}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value; return true })
	return m
}

func TestSlogOneRecordPerEvent(t *testing.T) {
	h := &capture{min: slog.LevelDebug}
	s := events.Slog(slog.New(h))
	kinds := oneOfEachKind()
	s.Emit(events.Event{Kind: events.KindTransition, Server: "srv", Seq: 1, Time: t0, From: "idle", To: "connecting", Trigger: "started", Generation: 1})
	s.Emit(events.Event{Kind: events.KindTransition, Server: "srv", Seq: 2, From: "connecting", To: "failed", Trigger: "handshake-failed",
		Verdict: classify.Verdict{Class: classify.Unauthorized, HTTPStatus: 401}, Reason: "unauthorized"})
	s.Emit(kinds[events.KindCallFailed])
	s.Emit(kinds[events.KindRetryScheduled])
	s.Emit(kinds[events.KindProbeReport])
	s.Emit(kinds[events.KindCatalogChanged])

	require.Len(t, h.records, 6)
	r := h.records[0]
	require.Equal(t, slog.LevelInfo, r.Level)
	require.Equal(t, "mcpsup transition", r.Message)
	require.True(t, r.Time.Equal(t0), "the record carries the event's time")
	a := attrs(r)
	require.Equal(t, "srv", a["server"].String())
	require.Equal(t, "connecting", a["to"].String())
	require.Equal(t, uint64(1), a["generation"].Uint64())
	require.NotContains(t, a, "verdict", "zero fields are left out")

	r = h.records[1]
	require.Equal(t, slog.LevelWarn, r.Level, "entering failed is a warning")
	require.False(t, r.Time.IsZero())
	v := attrs(r)["verdict"].Group()
	require.Equal(t, "class", v[0].Key)
	require.Equal(t, "unauthorized", v[0].Value.String())
	require.Equal(t, "unauthorized", attrs(r)["reason"].String())

	require.Equal(t, slog.LevelWarn, h.records[2].Level, "a failed call is a warning")
	require.Equal(t, "outcome-unknown", attrs(h.records[2])["delivery"].String())

	require.Equal(t, slog.LevelInfo, h.records[3].Level)
	require.Equal(t, 1500*time.Millisecond+250*time.Microsecond+7, attrs(h.records[3])["delay"].Duration())

	require.Equal(t, slog.LevelWarn, h.records[4].Level, "a failed list is a warning")
	require.Contains(t, attrs(h.records[4])["lists"].String(), "resource-templates absent")

	require.Equal(t, []string{"sub", "mul"}, attrs(h.records[5])["removed"].Any())
	require.Equal(t, int64(3), attrs(h.records[5])["tools"].Int64())
}

func TestSlogRespectsLevel(t *testing.T) {
	h := &capture{min: slog.LevelWarn}
	s := events.Slog(slog.New(h))
	s.Emit(events.Event{Kind: events.KindStreamEnabled})
	s.Emit(events.Event{Kind: events.KindStreamDisabled, Detail: "rule fired"})
	require.Len(t, h.records, 1)
	require.Equal(t, "mcpsup stream-disabled", h.records[0].Message)
}

func TestLogLevel(t *testing.T) {
	for _, c := range []struct {
		e    events.Event
		want slog.Level
	}{
		{events.Event{Kind: events.KindTransition, From: "ready", To: "ready", Trigger: "call-failed"}, slog.LevelInfo},
		{events.Event{Kind: events.KindTransition, From: "failed", To: "failed", Reason: "budget-spent"}, slog.LevelWarn},
		{events.Event{Kind: events.KindTransition, From: "connecting", To: "failed"}, slog.LevelWarn},
		{events.Event{Kind: events.KindCallFailed}, slog.LevelWarn},
		{events.Event{Kind: events.KindStreamDisabled}, slog.LevelWarn},
		{events.Event{Kind: events.KindStreamEnabled}, slog.LevelInfo},
		{events.Event{Kind: events.KindSessionEnded}, slog.LevelInfo},
		{events.Event{Kind: events.KindProbeReport, Lists: []events.ListOutcome{{Status: events.ListAbsent}}}, slog.LevelInfo},
	} {
		require.Equal(t, c.want, events.LogLevel(c.e), "%+v", c.e)
	}
}

// Every field with a json tag is an attribute, under that name: Connection
// too, which tells a sessionless session's records apart.
func TestAttrsNameEveryTaggedField(t *testing.T) {
	a := map[string]slog.Value{}
	for _, at := range events.Attrs(events.Event{Kind: events.KindSessionOpened, Connection: "conn:0123abcd", Generation: 2}) {
		a[at.Key] = at.Value
	}
	require.Equal(t, "conn:0123abcd", a["connection"].String())
	require.Equal(t, uint64(2), a["generation"].Uint64())
	require.Len(t, a, 2)
}

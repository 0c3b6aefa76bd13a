package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpsup/mcpsup/classify"
)

// LogLevel is the slog level of an event: [slog.LevelWarn] for a transition
// into "failed", a terminal reason, a call that failed, a discovery list that
// failed, and the standalone stream being disabled; [slog.LevelInfo]
// otherwise.
func LogLevel(e Event) slog.Level {
	switch {
	case e.Reason != "",
		e.Kind == KindTransition && e.To == "failed",
		e.Kind == KindCallFailed,
		e.Kind == KindStreamDisabled:
		return slog.LevelWarn
	}
	for _, l := range e.Lists {
		if l.Status == ListFailed {
			return slog.LevelWarn
		}
	}
	return slog.LevelInfo
}

// Slog returns a [Sink] that logs one record per event to l (slog.Default()
// when nil): message "mcpsup " + kind, level [LogLevel], record time the
// event's Time (the time of logging when it has none), and one attribute per
// non-zero field, named as in the JSON form ("verdict" is a group;
// "delay" is a duration; "lists" a readable summary). It does not redact:
// wrap it with [Redacting]. It is safe for concurrent use if l's handler is.
func Slog(l *slog.Logger) Sink {
	if l == nil {
		l = slog.Default()
	}
	return slogSink{h: l.Handler()}
}

type slogSink struct{ h slog.Handler }

func (s slogSink) Emit(e Event) {
	ctx := context.Background()
	lvl := LogLevel(e)
	if !s.h.Enabled(ctx, lvl) {
		return
	}
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	r := slog.NewRecord(t, lvl, "mcpsup "+string(e.Kind), 0)
	r.AddAttrs(Attrs(e)...)
	_ = s.h.Handle(ctx, r) // a handler's error has nowhere to go; Sink.Emit returns nothing
}

// Attrs returns the slog attributes of e's non-zero fields (except Kind and
// Time), named as in the JSON form.
func Attrs(e Event) []slog.Attr {
	var a []slog.Attr
	str := func(k, v string) {
		if v != "" {
			a = append(a, slog.String(k, v))
		}
	}
	str("server", e.Server)
	if e.Seq != 0 {
		a = append(a, slog.Uint64("seq", e.Seq))
	}
	str("from", string(e.From))
	str("to", string(e.To))
	str("trigger", string(e.Trigger))
	str("guard", e.Guard)
	if e.Verdict != (classify.Verdict{}) {
		a = append(a, verdictAttr(e))
	}
	if e.Generation != 0 {
		a = append(a, slog.Uint64("generation", e.Generation))
	}
	if e.Attempt != 0 {
		a = append(a, slog.Int("attempt", e.Attempt))
	}
	str("reason", string(e.Reason))
	if len(e.Lists) > 0 {
		a = append(a, slog.String("lists", listsSummary(e.Lists)))
	}
	for _, f := range []struct {
		k string
		v []string
	}{{"added", e.Added}, {"removed", e.Removed}, {"changed", e.Changed}} {
		if len(f.v) > 0 {
			a = append(a, slog.Any(f.k, f.v))
		}
	}
	if e.Omitted != 0 {
		a = append(a, slog.Int("omitted", e.Omitted))
	}
	if e.Kind == KindCatalogChanged || e.Tools != 0 {
		a = append(a, slog.Int("tools", e.Tools))
	}
	for _, l := range []struct {
		k string
		c *ListChange
	}{{"prompts", e.Prompts}, {"resources", e.Resources}, {"resource_templates", e.ResourceTemplates}} {
		if !l.c.Empty() {
			a = append(a, slog.String(l.k, l.c.signed()))
		}
	}
	str("op", e.Op)
	str("name", e.Name)
	str("delivery", e.Delivery)
	if e.Delay != 0 {
		a = append(a, slog.Duration("delay", e.Delay))
	}
	str("session_id", e.SessionID)
	for _, n := range []struct {
		k string
		v int
	}{{"count", e.Count}, {"bound", e.Bound}, {"http_status", e.HTTPStatus}, {"exit_code", e.ExitCode}, {"signal", e.Signal}} {
		if n.v != 0 {
			a = append(a, slog.Int(n.k, n.v))
		}
	}
	str("content_type", e.ContentType)
	str("stop", e.Stop)
	if e.Kind == KindSessionVerified {
		a = append(a, slog.Bool("alive", e.Alive))
	}
	str("detail", e.Detail)
	if e.Dropped != 0 {
		a = append(a, slog.Uint64("dropped", e.Dropped))
	}
	return a
}

func verdictAttr(e Event) slog.Attr {
	v := e.Verdict
	a := []any{slog.String("class", v.Class.String())}
	if v.HTTPStatus != 0 {
		a = append(a, slog.Int("http_status", v.HTTPStatus))
	}
	if v.RPC.Present {
		a = append(a, slog.Int64("rpc_code", v.RPC.Code))
		if v.RPC.Message != "" {
			a = append(a, slog.String("rpc_message", v.RPC.Message))
		}
	}
	if v.RetryAfter != 0 {
		a = append(a, slog.Duration("retry_after", v.RetryAfter))
	}
	if v.Method != "" {
		a = append(a, slog.String("method", v.Method))
	}
	if v.Detail != "" {
		a = append(a, slog.String("detail", v.Detail))
	}
	return slog.Group("verdict", a...)
}

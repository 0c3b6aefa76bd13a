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
// Time), named as in the JSON form; "verdict" is a group, "delay" a
// duration, "lists" a readable summary, "tools" and a session-verified's
// "alive" are always there.
func Attrs(e Event) []slog.Attr {
	var a []slog.Attr
	add := func(k string, v any, ok bool) {
		if ok {
			a = append(a, slog.Any(k, v))
		}
	}
	str := func(k, v string) { add(k, v, v != "") }
	num := func(k string, v int) { add(k, v, v != 0) }
	str("server", e.Server)
	add("seq", e.Seq, e.Seq != 0)
	str("from", string(e.From))
	str("to", string(e.To))
	str("trigger", string(e.Trigger))
	str("guard", e.Guard)
	if e.Verdict != (classify.Verdict{}) {
		a = append(a, verdictAttr(e.Verdict))
	}
	add("generation", e.Generation, e.Generation != 0)
	num("attempt", e.Attempt)
	str("reason", string(e.Reason))
	add("lists", listsSummary(e.Lists), len(e.Lists) > 0)
	add("added", e.Added, len(e.Added) > 0)
	add("removed", e.Removed, len(e.Removed) > 0)
	add("changed", e.Changed, len(e.Changed) > 0)
	num("omitted", e.Omitted)
	add("tools", e.Tools, e.Kind == KindCatalogChanged || e.Tools != 0)
	add("prompts", e.Prompts.signed(), !e.Prompts.Empty())
	add("resources", e.Resources.signed(), !e.Resources.Empty())
	add("resource_templates", e.ResourceTemplates.signed(), !e.ResourceTemplates.Empty())
	str("op", e.Op)
	str("name", e.Name)
	str("delivery", e.Delivery)
	add("delay", e.Delay, e.Delay != 0)
	str("session_id", e.SessionID)
	num("count", e.Count)
	num("bound", e.Bound)
	num("http_status", e.HTTPStatus)
	str("content_type", e.ContentType)
	num("exit_code", e.ExitCode)
	num("signal", e.Signal)
	str("stop", e.Stop)
	add("alive", e.Alive, e.Kind == KindSessionVerified)
	str("request_id", e.RequestID)
	str("reissued_as", e.ReissuedAs)
	str("detail", e.Detail)
	add("dropped", e.Dropped, e.Dropped != 0)
	return a
}

func verdictAttr(v classify.Verdict) slog.Attr {
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

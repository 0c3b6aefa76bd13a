package events

import (
	"cmp"
	"context"
	"log/slog"
	"reflect"
	"slices"
	"strings"
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
		e.Kind == KindStreamDisabled,
		slices.ContainsFunc(e.Lists, func(l ListOutcome) bool { return l.Status == ListFailed }):
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// Slog returns a [Sink] that logs one record per event to l (slog.Default()
// when nil): message "mcpsup " + kind, level [LogLevel], record time the
// event's Time (else now), attributes [Attrs]. It does not redact. It is
// safe for concurrent use if l's handler is.
func Slog(l *slog.Logger) Sink {
	h := cmp.Or(l, slog.Default()).Handler()
	return SinkFunc(func(e Event) {
		ctx := context.Background()
		lvl := LogLevel(e)
		if !h.Enabled(ctx, lvl) {
			return
		}
		t := e.Time
		if t.IsZero() {
			t = time.Now()
		}
		r := slog.NewRecord(t, lvl, "mcpsup "+string(e.Kind), 0)
		r.AddAttrs(Attrs(e)...)
		_ = h.Handle(ctx, r) // a handler's error has nowhere to go; Sink.Emit returns nothing
	})
}

// Attrs returns the slog attributes of e's non-zero fields but Kind and
// Time, in field order, named by their json tags; "verdict" is a group,
// "delay" a duration, "lists" and the list changes readable text; "tools"
// of a catalog-changed and "alive" of a session-verified are always there.
func Attrs(e Event) []slog.Attr {
	var a []slog.Attr
	ev := reflect.ValueOf(e)
	for i := range ev.NumField() {
		f := ev.Field(i)
		name, _, _ := strings.Cut(ev.Type().Field(i).Tag.Get("json"), ",")
		switch x := f.Interface().(type) {
		case Kind, time.Time: // the record's message and time
		case classify.Verdict:
			if x != (classify.Verdict{}) {
				a = append(a, verdictAttr(x))
			}
		case []ListOutcome:
			if len(x) > 0 {
				a = append(a, slog.String("lists", listsSummary(x)))
			}
		case time.Duration:
			if x != 0 {
				a = append(a, slog.Duration("delay", x))
			}
		case *ListChange:
			if !x.Empty() {
				a = append(a, slog.String(name, x.signed()))
			}
		default:
			always := name == "tools" && e.Kind == KindCatalogChanged || name == "alive" && e.Kind == KindSessionVerified
			if f.Kind() == reflect.String && !f.IsZero() {
				a = append(a, slog.String(name, f.String()))
			} else if !f.IsZero() || always {
				a = append(a, slog.Any(name, x))
			}
		}
	}
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

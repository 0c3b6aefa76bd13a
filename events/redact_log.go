package events

import (
	"context"
	"fmt"
	"log/slog"
)

// RedactingHandler returns a [slog.Handler] that redacts each record by r
// (nil: the patterns only) before next: the message and string values by
// [Redactor.Text]; the value of a key that names a session id
// ("session_id", "Mcp-Session-Id") or a credential, as [Redactor] reads a
// name in text, hashed or [Masked]; errors, Stringers and other values by
// their redacted text; groups member by member; numbers, booleans,
// durations and times kept. It is safe for concurrent use if next is.
func RedactingHandler(r *Redactor, next slog.Handler) slog.Handler {
	return &redactingHandler{next, r}
}

// redactingHandler takes Enabled from next.
type redactingHandler struct {
	slog.Handler
	r *Redactor
}

func (h *redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Text(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h *redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &redactingHandler{h.Handler.WithAttrs(h.attrs(as)), h.r}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{h.Handler.WithGroup(name), h.r}
}

func (h *redactingHandler) attrs(as []slog.Attr) []slog.Attr {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	return out
}

func (h *redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch {
	case v.Kind() == slog.KindGroup:
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(h.attrs(v.Group())...)}
	case names(a.Key, idGroup):
		return slog.String(a.Key, hashUnlessHashed(valueText(v)))
	case names(a.Key, credentialGroup):
		return slog.String(a.Key, Masked)
	case v.Kind() == slog.KindString:
		return slog.String(a.Key, h.r.Text(v.String()))
	case v.Kind() != slog.KindAny:
		return slog.Attr{Key: a.Key, Value: v}
	}
	if ss, ok := v.Any().([]string); ok {
		return slog.Any(a.Key, h.r.texts(ss))
	}
	return slog.String(a.Key, h.r.Text(valueText(v)))
}

// valueText renders v as slog's text handler does (%+v); fmt reports a
// panicking Error or String method (a typed nil) in the text.
func valueText(v slog.Value) string { return fmt.Sprintf("%+v", v.Any()) }

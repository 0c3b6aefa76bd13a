package events

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
)

// RedactingHandler returns a [slog.Handler] that redacts every record by the
// rules of r (nil: the patterns only) before next handles it:
//
//   - the message, and every string value, by [Redactor.Text];
//   - a value whose key names a session id ("session_id", "sessionId",
//     "Mcp-Session-Id", ..., case-insensitive) is hashed ([HashSessionID])
//     unless it is a hash already; a value whose key is a credential name
//     (see [Redactor]: "token", "api_key", "Authorization", ...) is [Masked];
//   - an error or [fmt.Stringer] value becomes its redacted text, a
//     [slog.LogValuer] is resolved first, groups are redacted member by
//     member; numbers, booleans, durations and times are kept; any other
//     value becomes its redacted fmt text (%+v), since its fields may hold
//     anything.
//
// Attributes given to WithAttrs are redacted once, when given. It is safe for
// concurrent use if next is.
func RedactingHandler(r *Redactor, next slog.Handler) slog.Handler {
	return &redactingHandler{r: r, next: next}
}

type redactingHandler struct {
	r    *Redactor
	next slog.Handler
}

func (h *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Text(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &redactingHandler{r: h.r, next: h.next.WithAttrs(red)}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{r: h.r, next: h.next.WithGroup(name)}
}

// sessionKey matches attribute keys that name a session id.
var sessionKey = regexp.MustCompile(`(?i)^(?:mcp[-_]?)?session[-_]?id$`)

func (h *redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch {
	case v.Kind() == slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, m := range g {
			red[i] = h.attr(m)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case sessionKey.MatchString(a.Key):
		return slog.String(a.Key, hashUnlessHashed(valueText(v)))
	case isCredentialName(a.Key):
		return slog.String(a.Key, Masked)
	}
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.Text(v.String()))
	case slog.KindAny:
		if ss, ok := v.Any().([]string); ok {
			return slog.Any(a.Key, h.r.texts(ss))
		}
		return slog.String(a.Key, h.r.Text(valueText(v)))
	}
	return slog.Attr{Key: a.Key, Value: v} // numbers, booleans, durations, times
}

// valueText renders a value as a text handler would, errors and Stringers
// by their text. A method that panics (a typed nil, say) yields a marker, as
// slog's own handlers do.
func valueText(v slog.Value) (s string) {
	if v.Kind() != slog.KindAny {
		return v.String()
	}
	defer func() {
		if p := recover(); p != nil {
			s = fmt.Sprintf("!PANIC: %v", p)
		}
	}()
	switch x := v.Any().(type) {
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprintf("%+v", v.Any())
}

// Package events carries what a supervised MCP connection does, as values a
// host can show and record (DESIGN.md section 4).
//
// Every transition of the state machine, internal transitions included, is
// an [Event] of kind [KindTransition]; the supervisor reports the other
// kinds (probe report, catalog change, call failed without reconnect,
// standalone stream disabled or enabled, retry scheduled, rate-limit window,
// session opened or ended) through the same [Sink]. Package events is a leaf:
// it imports only classify and the standard library, so it defines the
// vocabulary: [Kind], [State], [Trigger] and [Reason] are string types whose
// values are the kebab-case names of the JSON form, which fsm uses directly and
// supervisor re-exports for hosts (supervisor.State is events.State), so a host compares an event's
// fields with typed constants: e.To == events.StateFailed.
//
// # Sinks
//
//   - [SinkFunc]: a callback.
//   - [Subscription]: a buffered channel that never blocks the emitter; drops
//     are counted ([Subscription.Dropped]) and reported on the next delivered
//     event ([Event.Dropped]).
//   - [Slog]: one log/slog record per event, Warn for failures ([LogLevel]).
//   - [JSONLines]: one JSON object per line, the form below.
//   - [Multi]: fan-out; [Redacting]: redacts before passing on; [Recorder]:
//     keeps everything, for tests.
//
// Redaction: no sink redacts by itself. Wrap every sink whose output leaves
// the process with [Redacting] and a [Redactor] that knows the session ids
// and credentials in play, and every log handler with [RedactingHandler];
// even without them it masks URL userinfo, credential parameters, bearer
// tokens, Authorization and Cookie header values, and hashes session ids
// where go-sdk names them ("(session ID: <id>)", `session IDs "a" and "b"`).
// Session ids appear only as [HashSessionID] hashes. Only free text is
// rewritten, never the fixed vocabulary (kinds, states, triggers, guards,
// reasons, methods, deliveries).
//
// # JSON form
//
// [Event.MarshalJSON] writes one JSON object per event, the same for every
// kind; [Event.UnmarshalJSON] reads it back exactly (times in UTC). Field
// names are stable; a field is omitted when its value is zero. A reader must
// ignore fields and kinds it does not know. "v" changes only when a field
// changes meaning or is removed.
//
// Each field of [Event] is written under the name its json tag gives
// (Kind as "kind", SessionID as "session_id", ...), and "v" first, the
// version ([Version]); four are written in a form of their own: "time"
// (RFC 3339, nanoseconds, UTC), "delay_ms" (Delay), "verdict" and "lists"
// (objects below). Which fields a kind carries is said at its constant.
//
// A verdict object (classify.Verdict):
//
//	field            type     meaning
//	class            string   the class's kebab-case name, e.g. "rate-limited"
//	http_status      number   HTTP status
//	rpc              object   the JSON-RPC error, when present: code, message, has_id
//	retry_after_ms   number   Retry-After in milliseconds
//	method           string   JSON-RPC method of the failed request
//	session_id_sent  bool     the request carried Mcp-Session-Id
//	detail           string   the error's text
//
// A lists element (ListOutcome): list, status, items, verdict (object as
// above), warning.
//
// A change object (ListChange): added, removed, changed, each an array of
// string, and omitted, the number of keys left off them; the object is
// omitted when the list did not change. Every name list holds at most
// MaxNames names of at most MaxNameBytes bytes each (see BoundNames).
//
// Durations are milliseconds, written exactly: whole numbers, or up to six
// decimals for a fraction of a millisecond.
//
// # Reading back, and text for people
//
// [ReadJSONLines] reads a recorded stream back; [Summary] is the one-line
// text of one event, with every control character escaped ([Printable]).
// The views of a whole stream (the text timeline, Mermaid, the HTML page)
// are package views, which imports this one.
package events

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
//	field         type             Event field   kinds
//	v             number (1)       -             all: the version, [Version]
//	kind          string           Kind          all
//	server        string           Server        all
//	seq           number           Seq           all (the supervisor numbers every event of a server)
//	time          RFC 3339 string  Time          all; nanoseconds, UTC
//	from, to      string           From, To      transition: states
//	trigger       string           Trigger       transition
//	guard         string           Guard         transition
//	verdict       object           Verdict       transition, call-failed, retry-scheduled, rate-limit-window
//	generation    number           Generation    transition, probe-report, catalog-changed, call-failed, retry-scheduled, rate-limit-window, stream-disabled, stream-declined, session-*
//	attempt       number           Attempt       transition, retry-scheduled
//	reason        string           Reason        transition into a terminal failed
//	lists         array of object  Lists         probe-report
//	added         array of string  Added         catalog-changed: tool names
//	removed       array of string  Removed       catalog-changed
//	changed       array of string  Changed       catalog-changed
//	omitted       number           Omitted       catalog-changed: tool names left off added, removed, changed
//	tools         number           Tools         catalog-changed: tools now
//	prompts       object           Prompts       catalog-changed: prompt names, as a change object
//	resources     object           Resources     catalog-changed: resource URIs, as a change object
//	resource_templates object      ResourceTemplates catalog-changed: URI templates, as a change object
//	op            string           Op            call-failed: MCP method, e.g. "tools/call"; server-request-refused
//	name          string           Name          call-failed: tool or prompt name, resource URI
//	delivery      string           Delivery      call-failed: "not-sent", "outcome-unknown", "answered"
//	delay_ms      number           Delay         retry-scheduled, rate-limit-window: milliseconds
//	session_id    string           SessionID     session-opened, session-ended: "sid:" + 8 hex; absent when sessionless
//	connection    string           Connection    session-opened, session-ended: "conn:" + 8 hex, ours
//	count         number           Count         stream-event-dropped, response-dropped, stdout-line-dropped, server-request-refused: the session's so far
//	bound         number           Bound         response-dropped, server-request-refused: requests in flight
//	http_status   number           HTTPStatus    stream-declined
//	content_type  string           ContentType   stream-declined
//	exit_code     number           ExitCode      process-exited: -1 for a signal
//	signal        number           Signal        process-exited
//	stop          string           Stop          process-exited: "stdin-closed", "sigterm", "sigkill"
//	alive         bool             Alive         session-verified: the liveness request was answered
//	detail        string           Detail        any: free text for people (an error's, a stderr tail)
//	dropped       number           Dropped       any: events dropped just before this one
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

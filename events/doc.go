// Package events carries what a supervised MCP connection does, as values a
// host can show and record (DESIGN.md section 4).
//
// Every state machine transition, internal ones included, is an [Event] of
// kind [KindTransition]; the supervisor's other facts (probe report, catalog
// change, failed call, retry, session opened or ended ...) go through the
// same [Sink]. [Kind], [State], [Trigger] and [Reason] are string types whose
// values are the kebab-case names of the JSON form: e.To == events.StateFailed.
//
// No sink redacts by itself: a supervisor and a hub pass their events
// through [Redactor.Redact], their logs through [RedactingHandler], with a
// [Redactor] that knows the session ids and credentials in play (DESIGN.md
// section 7). Only free text is rewritten, never the vocabulary.
//
// # JSON form
//
// [Event.MarshalJSON] writes one object per event: "v" ([Version]) first,
// then each field under its json tag, omitted when zero; "time" is RFC 3339
// with nanoseconds in UTC; "delay_ms" and a verdict's "retry_after_ms" are
// milliseconds, exact (up to six decimals). A verdict (classify.Verdict) is
// an object: class (kebab-case), http_status, rpc {code, message, has_id},
// retry_after_ms, method, session_id_sent, detail. "lists" holds
// {list, status, items, verdict, warning} objects. [Event.UnmarshalJSON]
// reads it back exactly. A reader ignores fields and kinds it does not
// know; "v" changes only when a field changes meaning or is removed.
// [ReadJSONLines] reads a recorded stream back; package views draws it.
package events

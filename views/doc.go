// Package views renders recorded or live events for people: a per-server
// text timeline ([WriteTimeline], [Timeline], [LiveTimeline]) and a Mermaid
// stateDiagram-v2 of the path each server took ([WriteMermaid], [Mermaid]);
// package views/htmltimeline renders the same events as one HTML page.
//
// The views sit at the top: they import events (the values, their JSON
// form, [events.ReadJSONLines] and the one-line [events.Summary]) and are
// imported by nothing in the library but the commands and examples.
package views

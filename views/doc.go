// Package views renders recorded or live events for people: a per-server
// text timeline ([WriteTimeline], [Timeline], [LiveTimeline]) and a Mermaid
// stateDiagram-v2 of the path each server took ([WriteMermaid], [Mermaid]);
// package views/htmltimeline renders the same events as one HTML page.

package views

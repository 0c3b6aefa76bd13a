// Package views renders recorded ([events.ReadJSONLines]) or live events for
// people: a per-server text timeline ([WriteTimeline], [LiveTimeline]) and a
// Mermaid stateDiagram-v2 of the path each server took ([WriteMermaid]);
// package views/htmltimeline renders the same events as one HTML page.

package views

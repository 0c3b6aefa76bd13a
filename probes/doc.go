// Package probes discovers an MCP server's catalog (tools, resources, prompts,
// resource templates) through the small [Lister] interface, one page at a
// time; [SessionLister] adapts a go-sdk *mcp.ClientSession. Each list's error
// is classified as the Lister returned it, so a host that records wire facts
// attaches them per request (the lists run concurrently).
//
// [ProbeBlind] serves a resumed session of unknown capabilities, and
// [ListDeclared] and [ListOnly] one whose capabilities are known (DESIGN.md
// section 2; failure story S1). `tools/list` is strict: its failure, but for
// -32601 (no tools), fails the discovery with a [*ListError]. The other
// lists are never strict: -32601 makes one absent (with a warning when it
// was declared), any other failure [Degraded] with its verdict, so a side
// list never costs the tool catalog. Unauthorized and the caller's
// cancellation propagate from any list and cancel the rest; any other strict
// failure lets the rest settle, each within [Options.ProbeTimeout].
//
// Each list follows `nextCursor` within [Options.MaxPages] and
// [Options.MaxItems], and stops at a repeated cursor, with a
// [*PaginationError]. Every result carries a [Report], filled on error too.
package probes

// Package probes discovers an MCP server's catalog (tools, resources, prompts,
// resource templates) through the small [Lister] interface, one page at a
// time, the lists concurrently; [SessionLister] adapts a go-sdk
// *mcp.ClientSession. Each list's error is classified as the Lister
// returned it, so a host that records wire facts attaches them per request.
//
// `tools/list` is strict: its failure, but for -32601, fails the discovery
// with a [*ListError]; a side list's failure never costs the tool catalog
// (DESIGN.md section 2, failure story S1). Every result carries a [Report],
// filled on error too.
package probes

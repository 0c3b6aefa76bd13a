// Package probes discovers an MCP server's catalog: its tools, resources,
// prompts and resource templates, listed with `tools/list`, `resources/list`,
// `prompts/list` and `resources/templates/list` (MCP spec, server features).
//
// It lists through the small [Lister] interface, one page at a time;
// [SessionLister] adapts a go-sdk *mcp.ClientSession. Every error a list
// returns is classified with package classify, as the Lister returned it.
// go-sdk reports most HTTP answers only as text, so a host that records wire
// facts wraps its Lister to attach to each request's error the facts of that
// request (a *classify.HTTPError): the lists run concurrently, so facts
// gathered per discovery rather than per request would mix them.
//
// # Two ways to discover
//
// [ProbeBlind] serves a resumed session whose capabilities are unknown
// (DESIGN.md section 2, state `probing`; failure story S1). It lists all four
// concurrently. `tools/list` is strict and alone decides: it either yields the
// tool catalog or a [*ListError] carrying its verdict, from which the state
// machine chooses stale recovery or failure. A -32601 (Method not found)
// answer to `tools/list` means the server has no tools: absent, not a failure.
// The other three are speculative and settle on their own: -32601 in any
// wrapping means absent; any other failure, their own [Options.ProbeTimeout]
// included, makes the list absent but reported as [Degraded] with its
// verdict. A speculative probe never cancels `tools/list`, and its failure
// never discards the tool catalog, with two exceptions that always
// propagate, from any list: unauthorized (HTTP 401, or 403 with
// insufficient_scope), and the cancellation of the caller's context. Then
// the remaining lists are canceled and the error returned. A failure of
// `tools/list` for any other reason lets the other lists settle first (each
// within its ProbeTimeout), so their items and reports are kept in the
// returned Catalog: a caller that retries on the same session lists only
// what did not settle.
//
// [ListDeclared] serves a session whose capabilities are known (after
// `initialize`, or a resume with persisted capabilities). It always tries
// `tools/list` (strict when the tools capability is declared, speculative
// when not: some servers serve tools they do not declare), and lists the
// rest as declared: resources and resource templates for the resources
// capability, prompts for the prompts capability. A declared list answering -32601 is absent with a warning in
// its report: the capabilities and the methods disagree. Otherwise
// `tools/list` is strict, as in blind probing, and the other declared lists
// are not: any failure makes them [Degraded] with their verdict, so the tool
// catalog is never dropped because of a side list (DESIGN.md section 1, S1).
// Unauthorized and the caller's cancellation propagate, as in blind probing.
//
// A side list failing with session-expired or transport is degraded too,
// though the session is likely gone: the supervisor learns of that from the
// session itself (DESIGN.md section 2, "the session died"), not from a side
// list.
//
// # Pagination
//
// Each list follows `nextCursor` until it is empty, within
// [Options.MaxPages] pages and [Options.MaxItems] items, and stops at a
// cursor the server already returned for that list. Either way the list
// fails with a [*PaginationError] naming it (strict for `tools/list`,
// degraded for the others).
//
// # Report
//
// Every result carries a [Report]: per list, its [Status] (present, absent,
// degraded, failed), why ([Reason], the verdict, a warning), pages and item
// count. The report is filled also when an error is returned.
package probes

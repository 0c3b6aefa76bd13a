// Package classify turns any error from an MCP call into a [Verdict]: a
// [Class] and the facts behind it. It is pure: no I/O (DESIGN.md section 3).
//
// Decisions rest on typed facts (the wire layer's [HTTPError], go-sdk's
// *jsonrpc.Error and sentinels, context, net, url and syscall errors, io.EOF),
// never on words in messages, but for a JSON-RPC error object embedded in a
// message (read only when no other JSON-RPC, HTTP or closed-connection fact
// is there) and go-sdk's multi-round-trip give-up. When one error carries
// facts of several classes, the first [Class] in declaration order wins;
// go-sdk's -32005 and a [NotSentError] decide only when nothing else does. A
// done caller context makes the verdict canceled unless its cause is
// [ErrDeadline] (then timeout). The walk is iterative, cycle-safe, bounded by
// [MaxDepth], [MaxNodes] and [MaxScan], and recovers panics in error methods.
package classify

// Package httpsession is mcpsup's streamable HTTP transport of an MCP
// server, built around go-sdk v1.8.0's client (DESIGN.md sections 4 and 7).
// [Dialer] (a session.Dialer) keeps what outlives a session: the era and the
// stream decision ([StreamSwitch]). [Session] is one session on its own
// mcp.Connection ([Open], [Resume]), configured by [Config]; it records an
// [Exchange] per request ([FactsMiddleware], [WithExchange], [Annotate]) and
// fails a refused answer's request alone (code [CodeHTTPAnswer]). The
// event-stream parser, the OAuth carrier and the bounded body are the
// subpackages sse, oauthcarrier and wirebody.
package httpsession

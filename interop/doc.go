// Package interop holds tests only: it runs mcpsup's assumptions against the
// TypeScript reference server, @modelcontextprotocol/server-everything, in
// streamable-HTTP mode on 127.0.0.1: first the facts about the server
// that mcpsup relies on (everything_test.go), then the supervisor's
// scenarios against it (supervisor_test.go): connect, a server restart
// noticed by the standalone stream or by the next call, and a resume of a
// persisted session on the live and on a restarted server, each counted
// request by request at the supervisor's HTTP transport; and the reference
// server beside a go-sdk 2026-07-28 server in one hub (era_test.go): each
// era learned, the 2026 listen stream carrying list_changed, both resumed
// with no handshake.
//
// The server is installed by interop/install.sh into <module root>/.interop
// (or found through the MCPSUP_SERVER_EVERYTHING environment variable, the
// path of its dist/index.js). When node or the server is missing, the tests
// skip with a loud message, or fail when the CI environment variable is set.
package interop

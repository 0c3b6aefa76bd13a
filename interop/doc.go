// Package interop holds tests only: it runs mcpsup's assumptions against the
// TypeScript reference server, @modelcontextprotocol/server-everything, in
// streamable-HTTP mode on 127.0.0.1.
//
// The server is installed by interop/install.sh into <module root>/.interop
// (or found through the MCPSUP_SERVER_EVERYTHING environment variable, the
// path of its dist/index.js). When node or the server is missing, the tests
// skip with a loud message, or fail when the CI environment variable is set.
package interop

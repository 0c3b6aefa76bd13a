// Package mcpheader makes the header values MCP 2026-07-28 asks of a
// streamable HTTP client from a request's params
// (basic/transports/streamable-http.mdx, "Standard Request Headers",
// "Custom Headers from Tool Parameters", "Value Encoding"). It knows
// nothing of a session: [Params] learns the tools' bindings from the
// tools/list results it is handed.
package mcpheader

import (
	"encoding/base64"
	"strings"
)

// Name is the standard request header naming a tools/call's tool, a
// prompts/get's prompt or a resources/read's URI.
const Name = "Mcp-Name"

// Base64 sentinel of a header value (streamable-http.mdx, Value Encoding).
const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// Value is v as a header value, in the Base64 sentinel form
// ("=?base64?...?=") when it needs it: white space at either end, a byte
// outside visible ASCII, space and tab (RFC 9110 section 5.5), or the
// sentinel's own form (Standard Request Headers: "clients MUST encode it
// using the Base64 sentinel format").
func Value(v string) string {
	if needsBase64(v) {
		return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(v)) + sentinelSuffix
	}
	return v
}

// needsBase64 reports whether a header value must travel in the Base64
// sentinel form (streamable-http.mdx, Value Encoding; RFC 9110 section 5.5:
// field values are visible ASCII, space and tab).
func needsBase64(v string) bool {
	if v != strings.TrimSpace(v) {
		return true
	}
	if strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix) {
		return true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return true
		}
	}
	return false
}

package httpsession

import (
	"encoding/base64"
	"strings"
)

// headerName is the standard request header naming a tools/call's tool, a
// prompts/get's prompt or a resources/read's URI (MCP 2026-07-28,
// basic/transports/streamable-http.mdx, Standard Request Headers).
const headerName = "Mcp-Name"

// Base64 sentinel of a header value (streamable-http.mdx, Value Encoding).
const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// headerText is v as a header value, in the Base64 sentinel form when it
// needs it (streamable-http.mdx, Value Encoding; Standard Request Headers:
// "clients MUST encode it using the Base64 sentinel format").
func headerText(v string) string {
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

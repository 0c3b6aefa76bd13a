package classify

import "fmt"

// Class is the kind of failure an error represents. The zero value is
// [None], the class of a nil error.
//
// Classes are listed in precedence order (DESIGN.md section 3): when one error
// carries facts of several classes, the class declared first wins.
type Class uint8

const (
	// None is the class of a nil error: nothing failed.
	None Class = iota
	// Canceled: the caller's context is done; the caller gave up. Never
	// recovered, never retried.
	Canceled
	// Unauthorized: HTTP 401, or 403 whose WWW-Authenticate header carries
	// error="insufficient_scope" (MCP authorization, RFC 6750 section 3.1).
	// Never recovered, never retried: the host re-authorizes.
	Unauthorized
	// MethodNotFound: JSON-RPC -32601 (Method not found) anywhere, also inside
	// a non-2xx body, even a 404 body (failure story S1). The capability is
	// absent; the session is fine.
	MethodNotFound
	// SessionExpired: the server no longer knows the session: HTTP 404 on a
	// request that carried Mcp-Session-Id (MCP transports, session
	// management), mcp.ErrSessionMissing, or a 4xx whose JSON-RPC error has a
	// null or absent id and code -32000 answering a request that carried a
	// session id (how the TypeScript and Python SDK servers reject an unknown
	// session; failure story S2).
	SessionExpired
	// RateLimited: HTTP 429, with Retry-After when the server gave one.
	RateLimited
	// Forbidden: HTTP 403 without insufficient_scope (a WAF or a policy).
	Forbidden
	// ServerError: HTTP 5xx, or go-sdk's bare -32005 "rejected by transport"
	// (which it returns for 500/502/503/504/429 with the body discarded) when
	// no wire facts tell which status it was.
	ServerError
	// Application: any other HTTP status, including a 404 on a request that
	// carried no session id (a proxy or a stateless server: reconnecting
	// would not help), or a JSON-RPC error other than -32601.
	Application
	// Protocol: a malformed response: bad JSON, a 2xx with an unexpected
	// content type, a stream that ended without the response.
	Protocol
	// Timeout: our own deadline passed (discovery timeout, HTTP client
	// timeout) while the caller still waits: the server was slow.
	Timeout
	// Transport: no HTTP status at all: connection refused or reset, DNS,
	// TLS, EOF, or a go-sdk connection that is already closed.
	Transport
	// Unknown: anything else. The verdict keeps the error text.
	Unknown

	numClasses
)

var classNames = [numClasses]string{
	None:           "none",
	Canceled:       "canceled",
	Unauthorized:   "unauthorized",
	MethodNotFound: "method-not-found",
	SessionExpired: "session-expired",
	RateLimited:    "rate-limited",
	Forbidden:      "forbidden",
	ServerError:    "server-error",
	Application:    "application",
	Protocol:       "protocol",
	Timeout:        "timeout",
	Transport:      "transport",
	Unknown:        "unknown",
}

// Classes returns every class except [None], in precedence order.
func Classes() []Class {
	out := make([]Class, 0, numClasses-1)
	for c := Canceled; c < numClasses; c++ {
		out = append(out, c)
	}
	return out
}

// String returns the kebab-case name used in DESIGN.md and in events, e.g.
// "session-expired".
func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// MarshalText encodes the class as its name.
func (c Class) MarshalText() ([]byte, error) {
	if c >= numClasses {
		return nil, fmt.Errorf("classify: invalid class %d", uint8(c))
	}
	return []byte(classNames[c]), nil
}

// UnmarshalText decodes a class name as written by MarshalText.
func (c *Class) UnmarshalText(b []byte) error {
	for i, n := range classNames {
		if n == string(b) {
			*c = Class(i)
			return nil
		}
	}
	return fmt.Errorf("classify: unknown class %q", b)
}

// Reconnects reports whether a call failure of this class, seen while the
// connection is ready, means the session is lost and a new one is needed.
// Only [Transport] and [SessionExpired] do (DESIGN.md section 3, failure
// story S4): every other status is an answer, and the session lives.
func (c Class) Reconnects() bool {
	return c == Transport || c == SessionExpired
}

// NamesNoCause reports a class that says nothing of the failure's cause:
// [Unknown] (a program that cannot start, an error go-sdk reports as text)
// and [Transport] (no HTTP answer: refused, reset, a TLS or DNS failure).
// An error's text naming such a verdict should add the failure's own
// (Verdict.Detail).
func (c Class) NamesNoCause() bool { return c == Unknown || c == Transport }

// Retries reports whether a connection that failed with this class may be
// retried from the failed state on the backoff schedule. All classes retry
// except [Canceled] and [Unauthorized] (and [None], which is no failure).
func (c Class) Retries() bool {
	return c != None && c != Canceled && c != Unauthorized && c < numClasses
}

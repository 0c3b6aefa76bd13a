package classify

import (
	"fmt"
	"slices"
)

// Class is the kind of failure an error represents, declared in precedence
// order (DESIGN.md section 3 has each one's facts). The zero value is [None].
type Class uint8

const (
	None     Class = iota // the class of a nil error
	Canceled              // the caller's context is done; never retried
	// Unauthorized: HTTP 401, 403 with error="insufficient_scope" (RFC 6750
	// section 3.1) or [ErrCredential]. Never retried: the host re-authorizes.
	Unauthorized
	MethodNotFound // JSON-RPC -32601 anywhere (failure story S1)
	SessionExpired // [HTTPError.SessionGone], mcp.ErrSessionMissing (S2)
	RateLimited    // HTTP 429, with Retry-After when given
	Forbidden      // HTTP 403 without insufficient_scope
	ServerError    // HTTP 5xx, or go-sdk's bare -32005 when nothing else decides
	Application    // any other HTTP status, or JSON-RPC error but -32601
	Protocol       // a malformed answer, or a server past a bound ([ErrProtocol])
	Timeout        // our own deadline passed while the caller still waits
	Transport      // no complete HTTP answer, or a closed go-sdk connection
	Unknown        // anything else; the verdict keeps the text

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
	i := slices.Index(classNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("classify: unknown class %q", b)
	}
	*c = Class(i)
	return nil
}

// Reconnects reports whether a call failing with this class on a ready
// connection means a new session is needed: only [Transport] and
// [SessionExpired] (failure story S4).
func (c Class) Reconnects() bool {
	return c == Transport || c == SessionExpired
}

// NamesNoCause reports a class that says nothing of the failure's cause
// ([Unknown], [Transport]): a text naming it should add Verdict.Detail.
func (c Class) NamesNoCause() bool { return c == Unknown || c == Transport }

// Retries reports whether a connection that failed with this class is
// retried on the backoff schedule: all but [None], [Canceled], [Unauthorized].
func (c Class) Retries() bool {
	return c != None && c != Canceled && c != Unauthorized && c < numClasses
}

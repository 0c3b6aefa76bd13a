package classify

import (
	"regexp"
	"strings"
)

// wireClass classifies one HTTP exchange by DESIGN.md section 3's table
// (sdkRPC as for sessionGone); [None] for a 2xx that says nothing itself.
func wireClass(w *HTTPError, sdkRPC RPCError) Class {
	s := w.Status
	switch {
	case s == 401:
		return Unauthorized
	case s == 403 && InsufficientScope(w.WWWAuthenticate):
		return Unauthorized
	case w.sessionGone(sdkRPC): // before -32601: a 404 answering no request by id
		return SessionExpired
	case w.RPC.Present && w.RPC.Code == CodeMethodNotFound: // S1: in any body
		return MethodNotFound
	case s == 429:
		return RateLimited
	case s == 403:
		return Forbidden
	case s >= 500 && s < 600:
		return ServerError
	case s >= 200 && s < 300 && w.Malformed:
		return Protocol
	case s >= 200 && s < 300 && w.RPC.Present:
		return Application
	case s >= 200 && s < 300:
		return None
	default: // 404 without a session id too: a new session would not help
		return Application
	}
}

// InsufficientScope reports whether a WWW-Authenticate value carries the
// auth-param error="insufficient_scope" (RFC 6750 section 3.1), which makes
// a 403 [Unauthorized]; parsed as auth-params (RFC 9110 section 11.2), the
// first maxAuthParams of them.
func InsufficientScope(h string) bool {
	for _, m := range authParam.FindAllStringSubmatch(h, maxAuthParams) {
		val := m[2]
		if strings.HasPrefix(val, `"`) {
			val = quotedPair.ReplaceAllString(strings.TrimSuffix(val[1:], `"`), "$1")
		}
		if strings.EqualFold(m[1], "error") && val == "insufficient_scope" {
			return true
		}
	}
	return false
}

const maxAuthParams = 64

// authParam is one auth-param: a token, "=", and a token or a quoted-string
// (an unterminated one runs to the end). A quoted-string is matched whole:
// no match starts inside one.
var authParam = regexp.MustCompile(`(?:^|[ \t,=])([^= \t,]+)[ \t]*=[ \t]*("(?:[^"\\]|\\.?)*"?|[^ \t,]*)`)

var quotedPair = regexp.MustCompile(`\\(.)`) // RFC 9110 section 5.6.4

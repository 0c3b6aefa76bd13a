package classify

import "strings"

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
// a 403 [Unauthorized]; parsed as auth-params (RFC 9110 section 11.2).
func InsufficientScope(h string) bool {
	found := false
	authParams(h, func(name, val string) bool {
		if strings.EqualFold(name, "error") && val == "insufficient_scope" {
			found = true
			return false
		}
		return true
	})
	return found
}

// maxAuthParams bounds the auth-params read from one header value.
const maxAuthParams = 64

// authParams calls fn for each name=value auth-param of a challenge list
// (`Bearer realm="x", error="insufficient_scope"`), unquoted, until fn
// returns false.
func authParams(h string, fn func(name, val string) bool) {
	for n := 0; n < maxAuthParams; n++ {
		h = strings.TrimLeft(h, " \t,")
		if h == "" {
			return
		}
		i := strings.IndexAny(h, "= \t,")
		if i < 0 {
			return // a lone scheme or token68
		}
		name := h[:i]
		rest := strings.TrimLeft(h[i:], " \t")
		if !strings.HasPrefix(rest, "=") || name == "" {
			// A scheme name, or the start of a token68 ("abc==").
			h = strings.TrimLeft(h[i:], "=")
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t")
		var val string
		if strings.HasPrefix(rest, `"`) {
			val, h = quoted(rest)
		} else {
			j := strings.IndexAny(rest, " \t,")
			if j < 0 {
				j = len(rest)
			}
			val, h = rest[:j], rest[j:]
		}
		if !fn(name, val) {
			return
		}
	}
}

// quoted unquotes the quoted-string at the start of s and returns it with the
// rest of s. An unterminated string ends at the end of s.
func quoted(s string) (val, rest string) {
	var b strings.Builder
	j := 1
	for ; j < len(s) && s[j] != '"'; j++ {
		if s[j] == '\\' && j+1 < len(s) {
			j++
		}
		b.WriteByte(s[j])
	}
	if j < len(s) {
		j++
	}
	return b.String(), s[j:]
}

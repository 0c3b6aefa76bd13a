package events

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// credentialWords make a parameter or header name a credential: a name is
// one when one of its parts, split at '-', '_' and '.' and compared
// case-insensitively, is one of them (see [Redactor]).
var credentialWords = []string{
	"token", "key", "apikey", "secret", "password", "passwd", "pwd",
	"sig", "signature", "auth", "authorization", "credential", "credentials",
	"jwt", "bearer", "cookie",
}

// isCredentialName reports whether name is a credential by credentialWords.
func isCredentialName(name string) bool {
	for part := range strings.FieldsFuncSeq(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		for _, w := range credentialWords {
			if strings.EqualFold(part, w) {
				return true
			}
		}
	}
	return false
}

// credentialName matches a credential name by credentialWords as a regular
// expression: only such names are matched, so a name before one cannot
// swallow it ("failed: Authorization: x").
var credentialName = `(?i)\b((?:[a-z0-9]+[\-_.])*(?:` + strings.Join(credentialWords, "|") + `)(?:[\-_.][a-z0-9]+)*)`

var (
	// scheme://userinfo@ (RFC 3986 section 3.2.1); net/http prints the
	// password as "***" but keeps the user, which is often a token itself.
	userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/?#@"'<>]+)@`)
	// name=value, as in a URL query or key=value text.
	assignment = regexp.MustCompile(credentialName + `=([^&#\s"'<>]+)`)
	// A header in any usual rendering: "Name: v", Go's "map[Name:[v]]",
	// JSON `"Name":"v"`. The value runs to a quote, a closing bracket or
	// the end of the line.
	header = regexp.MustCompile(credentialName + `("?\s*:\s*\[?"?)([^"\[\]\r\n][^"\]\r\n]*)`)
	// An HTTP credential in text: "Bearer <token68>", "Basic <base64>".
	scheme = regexp.MustCompile(`(?i)\b(bearer|basic)\s+([A-Za-z0-9\-._~+/]+=*)`)
	// Where a session id is named: "session ID", "session IDs",
	// "Session-Id", "session_id", "sessionId", "sessionid", "session".
	sessionWord = regexp.MustCompile(`(?i)session(?:[ _\-]?ids?)?`)
)

// redactPatterns applies the pattern rules of [Redactor] to s. registered,
// when not nil, returns the length of a registered session id starting at
// s[i] (0 for none), so that a registered id is hashed whole wherever it is
// named, whatever bytes it holds.
func redactPatterns(s string, registered func(s string, i int) int) string {
	lower := strings.ToLower(s) // the regular expressions run only where they may match
	if strings.Contains(s, "://") {
		s = userinfo.ReplaceAllStringFunc(s, func(m string) string {
			sub := userinfo.FindStringSubmatch(m)
			if sub[2] == Masked {
				return m
			}
			return sub[1] + Masked + "@"
		})
	}
	credential := false
	for _, w := range credentialWords {
		if strings.Contains(lower, w) {
			credential = true
			break
		}
	}
	if credential && strings.IndexByte(s, '=') >= 0 {
		s = assignment.ReplaceAllStringFunc(s, func(m string) string {
			sub := assignment.FindStringSubmatch(m)
			if strings.HasPrefix(sub[2], Masked) {
				return m
			}
			return sub[1] + "=" + Masked
		})
	}
	if credential && strings.IndexByte(s, ':') >= 0 {
		s = header.ReplaceAllStringFunc(s, func(m string) string {
			sub := header.FindStringSubmatch(m)
			name, sep, val := sub[1], sub[2], sub[3]
			if strings.HasPrefix(val, Masked) || strings.HasPrefix(val, "redacted") {
				return m
			}
			return name + sep + Masked
		})
	}
	if strings.Contains(lower, "bearer") || strings.Contains(lower, "basic") {
		s = scheme.ReplaceAllStringFunc(s, func(m string) string {
			sub := scheme.FindStringSubmatch(m)
			if strings.EqualFold(sub[1], "basic") && len(sub[2]) < 8 {
				return m // "basic auth": a word, not a credential
			}
			return m[:len(m)-len(sub[2])] + Masked
		})
	}
	if !strings.Contains(lower, "session") {
		return s
	}
	return hashNamedIDs(s, registered)
}

// hashNamedIDs hashes every session id that stands where a session id is
// named, in the forms go-sdk and HTTP libraries write:
//
//	(session ID: <id>)          go-sdk's streamable client errors
//	session ID: <id>            and any "session id" followed by ':' or '='
//	Mcp-Session-Id: <id>        header dumps; map[Mcp-Session-Id:[<id>]]
//	"sessionId":"<id>"          JSON
//	sessionid=<id>              URL queries, key=value log text
//	session IDs "<a>" and "<b>" Go's %q (go-sdk: mismatching session IDs,
//	session "<id>"              unknown session ID, in session)
//
// A raw id ends where a registered id ends, else at ')' closing "(session
// ID: ", else at a space, quote, ',', ';', ')', ']', '&', '#', '<' or '>'.
// A quoted id is unquoted and hashed as the id.
func hashNamedIDs(s string, registered func(s string, i int) int) string {
	var b strings.Builder
	last := 0
	for _, loc := range sessionWord.FindAllStringIndex(s, -1) {
		if loc[0] < last {
			continue
		}
		hasID := loc[1]-loc[0] > len("session")
		paren := loc[0] > 0 && s[loc[0]-1] == '('
		i := loc[1]
		if q := quoteAt(s, i); q != "" {
			i += len(q) // the end of a JSON key
		}
		i = skipSpace(s, i)
		sep := i < len(s) && (s[i] == ':' || s[i] == '=')
		if sep {
			i = skipSpace(s, i+1)
		}
		if sep && !paren && i < len(s) && s[i] == '[' {
			i++
		}
		switch q := quoteAt(s, i); {
		case q != "" && !paren && (sep || hasID || i > loc[1]):
			// Quoted: `session "x"`, `session ID "x"`, `"sessionId":"x"`,
			// go-sdk's `session IDs "a" and "b"`; also quoted once more
			// inside a quoted message (`session \"x\"`).
			for n := 0; n < 2 && strings.HasPrefix(s[i:], q); n++ {
				end, id := quotedAt(s, i, q)
				b.WriteString(s[last:i])
				b.WriteString(q + hashUnlessHashed(id) + q)
				last = end
				if !strings.HasPrefix(s[end:], " and "+q) {
					break
				}
				i = end + len(" and ")
			}
		case sep && hasID && i < len(s):
			end := rawIDEnd(s, i, paren, registered)
			if end > i {
				id := s[i:end]
				if s[i-1] == '=' {
					// A URL query carries the id escaped.
					if u, err := url.QueryUnescape(id); err == nil {
						id = u
					}
				}
				b.WriteString(s[last:i])
				writeToken(&b, s, i, end, hashUnlessHashed(id))
				last = end
			}
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// quoteAt returns the quote that opens at s[i]: `"`, `\"` (a quote
// inside a quoted message) or "" for none.
func quoteAt(s string, i int) string {
	switch {
	case strings.HasPrefix(s[i:], `"`):
		return `"`
	case strings.HasPrefix(s[i:], `\"`):
		return `\"`
	}
	return ""
}

// quotedAt reads the string quoted by q starting at s[i] and returns the
// index after it and its value: unquoted for `"` (the raw text when it does
// not unquote), up to the next `\"` for `\"`. An unterminated string runs
// to the end of s.
func quotedAt(s string, i int, q string) (end int, val string) {
	if q != `"` {
		j := strings.Index(s[i+len(q):], q)
		if j < 0 {
			return len(s), s[i+len(q):]
		}
		return i + len(q) + j + len(q), s[i+len(q) : i+len(q)+j]
	}
	j := i + 1
	for j < len(s) && s[j] != '"' {
		if s[j] == '\\' && j+1 < len(s) {
			j++
		}
		j++
	}
	if j >= len(s) {
		return len(s), s[i+1:]
	}
	if v, err := strconv.Unquote(s[i : j+1]); err == nil {
		return j + 1, v
	}
	return j + 1, s[i+1 : j]
}

// rawIDEnd returns where the unquoted id starting at s[i] ends.
func rawIDEnd(s string, i int, paren bool, registered func(string, int) int) int {
	if h := i + len("sid:01234567"); h <= len(s) && isHashedID(s[i:h]) && (h == len(s) || !isWord(s[h])) {
		return h // hashed already: Text is idempotent
	}
	if registered != nil {
		if n := registered(s, i); n > 0 {
			return i + n
		}
	}
	j := i
	for j < len(s) && s[j] > ' ' && s[j] <= '~' {
		if !paren && strings.IndexByte(`"',;)]&#<>`, s[j]) >= 0 {
			break
		}
		j++
	}
	if !paren {
		return j
	}
	// go-sdk: "(session ID: <id>)" then ':', ' ', a closing quote or the
	// end. The id itself may hold ')' (and "):"), so the last such ')'
	// before the next space closes it; none: the text was cut inside it.
	for k := j - 1; k >= i; k-- {
		if s[k] == ')' && (k+1 == len(s) || s[k+1] <= ' ' || strings.IndexByte(`:;,"'\`, s[k+1]) >= 0) {
			return k
		}
	}
	return j
}

func hashUnlessHashed(id string) string {
	if id == "" || isHashedID(id) || id == Masked {
		return id
	}
	return HashSessionID(id)
}

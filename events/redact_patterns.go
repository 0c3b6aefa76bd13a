package events

import (
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
	if strings.Contains(s, "://") {
		s = userinfo.ReplaceAllStringFunc(s, func(m string) string {
			sub := userinfo.FindStringSubmatch(m)
			if sub[2] == Masked {
				return m
			}
			return sub[1] + Masked + "@"
		})
	}
	if strings.IndexByte(s, '=') >= 0 {
		s = assignment.ReplaceAllStringFunc(s, func(m string) string {
			sub := assignment.FindStringSubmatch(m)
			if strings.HasPrefix(sub[2], Masked) {
				return m
			}
			return sub[1] + "=" + Masked
		})
	}
	if strings.IndexByte(s, ':') >= 0 {
		s = header.ReplaceAllStringFunc(s, func(m string) string {
			sub := header.FindStringSubmatch(m)
			name, sep, val := sub[1], sub[2], sub[3]
			if strings.HasPrefix(val, Masked) || strings.HasPrefix(val, "redacted") {
				return m
			}
			return name + sep + Masked
		})
	}
	s = scheme.ReplaceAllStringFunc(s, func(m string) string {
		sub := scheme.FindStringSubmatch(m)
		if strings.EqualFold(sub[1], "basic") && len(sub[2]) < 8 {
			return m // "basic auth": a word, not a credential
		}
		return m[:len(m)-len(sub[2])] + Masked
	})
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
	if !strings.Contains(strings.ToLower(s), "session") {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range sessionWord.FindAllStringIndex(s, -1) {
		if loc[0] < last {
			continue
		}
		hasID := loc[1]-loc[0] > len("session")
		paren := loc[0] > 0 && s[loc[0]-1] == '('
		i := loc[1]
		if i < len(s) && s[i] == '"' {
			i++ // the end of a JSON key
		}
		i = skipSpace(s, i)
		sep := i < len(s) && (s[i] == ':' || s[i] == '=')
		if sep {
			i = skipSpace(s, i+1)
		}
		if sep && i < len(s) && s[i] == '[' {
			i++
		}
		switch {
		case i < len(s) && s[i] == '"' && (sep || hasID || i > loc[1]):
			// Quoted: `session "x"`, `session ID "x"`, `"sessionId":"x"`,
			// and go-sdk's `session IDs "a" and "b"`.
			for n := 0; n < 2 && i < len(s) && s[i] == '"'; n++ {
				end, id := quotedAt(s, i)
				b.WriteString(s[last:i])
				b.WriteString(`"` + hashUnlessHashed(id) + `"`)
				last = end
				if !strings.HasPrefix(s[end:], ` and "`) {
					break
				}
				i = end + len(" and ")
			}
		case sep && hasID && i < len(s):
			end := rawIDEnd(s, i, paren, registered)
			if end > i {
				b.WriteString(s[last:i])
				b.WriteString(hashUnlessHashed(s[i:end]))
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

// quotedAt reads the Go or JSON quoted string starting at s[i] and returns
// the index after it and its value (the raw text when it does not unquote;
// an unterminated string runs to the end of s).
func quotedAt(s string, i int) (end int, val string) {
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
	if registered != nil {
		if n := registered(s, i); n > 0 {
			return i + n
		}
	}
	j := i
	for ; j < len(s); j++ {
		c := s[j]
		if c <= ' ' || c > '~' {
			break
		}
		if paren {
			// go-sdk: "(session ID: <id>)" then ':', ' ' or the end; the id
			// itself may hold ')'.
			if c == ')' && (j+1 == len(s) || strings.IndexByte(":; ,", s[j+1]) >= 0) {
				break
			}
			continue
		}
		if strings.IndexByte(`"',;)]&#<>`, c) >= 0 {
			break
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

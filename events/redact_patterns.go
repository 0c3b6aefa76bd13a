package events

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// credentialWords make a name a credential's when one of its parts, split
// at '-', '_' and '.', is one of them, ignoring case.
var credentialWords = []string{
	"token", "key", "apikey", "secret", "password", "passwd", "pwd",
	"sig", "signature", "auth", "authorization", "credential", "credentials",
	"jwt", "bearer", "cookie",
}

var (
	words          = strings.Join(credentialWords, "|")
	credentialPart = regexp.MustCompile(`(?i)(?:^|[\-_.])(?:` + words + `)(?:[\-_.]|$)`)
	// credentialName finds a credential name in text; its parts are letters
	// and digits, so a name before one cannot swallow it ("failed:
	// Authorization: x").
	credentialName = `(?i)\b((?:[a-z0-9]+[\-_.])*(?:` + words + `)(?:[\-_.][a-z0-9]+)*)`
)

func isCredentialName(name string) bool { return credentialPart.MatchString(name) }

// namedID finds where a session id is named: go-sdk's "(session ID: ", or a
// session word ("session ID(s)", "Mcp-Session-Id", "sessionId" ...), maybe
// a JSON key's end, then ':' or '=' (and Go's map '['), or spaces.
var namedID = regexp.MustCompile(`(?i)(\(session ID: )|session(?:[ _-]?(ids?))?(?:\\?")?(?:\s*([:=])\s*\[?|\s+)`)

// patterns are the pattern rules of [Redactor] but named session ids: where
// the lower-cased text holds one of hints, each match of re becomes
// mask(its submatches); mask returns the match to keep it.
var patterns = []struct {
	hints []string
	re    *regexp.Regexp
	mask  func(m []string) string
}{
	// scheme://userinfo@ (RFC 3986 section 3.2.1); the user is often a
	// token itself.
	{[]string{"://"}, regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#@"'<>]+@`),
		func(m []string) string { return m[1] + Masked + "@" }},
	// name=value, as in a URL query or key=value text.
	{credentialWords, regexp.MustCompile(credentialName + `=[^&#\s"'<>]+`),
		func(m []string) string { return m[1] + "=" + Masked }},
	// A header as "Name: v", Go's "map[Name:[v]]" or JSON `"Name":"v"`: the
	// value runs to a quote, a closing bracket or the end of the line.
	{credentialWords, regexp.MustCompile(credentialName + `("?\s*:\s*\[?"?)([^"\[\]\r\n][^"\]\r\n]*)`),
		func(m []string) string {
			if strings.HasPrefix(m[3], Masked) || strings.HasPrefix(m[3], "redacted") {
				return m[0]
			}
			return m[1] + m[2] + Masked
		}},
	// An HTTP credential in text (RFC 9110 section 11): "Bearer <token68>",
	// "Basic <base64>"; "basic auth" is a word, not a credential.
	{[]string{"bearer", "basic"}, regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)([A-Za-z0-9\-._~+/]+=*)`),
		func(m []string) string {
			if strings.EqualFold(m[1], "basic") && len(m[3]) < 8 {
				return m[0]
			}
			return m[1] + m[2] + Masked
		}},
}

// redactPatterns applies the pattern rules of [Redactor] to s; r (may be
// nil) knows the registered ids, hashed whole where they are named. Each
// expression runs only where a cheap scan says it may match.
func redactPatterns(s string, r *Redactor) string {
	lower := strings.ToLower(s)
	for _, p := range patterns {
		if slices.ContainsFunc(p.hints, func(h string) bool { return strings.Contains(lower, h) }) {
			s = p.re.ReplaceAllStringFunc(s, func(m string) string { return p.mask(p.re.FindStringSubmatch(m)) })
		}
	}
	if !strings.Contains(lower, "session") {
		return s
	}
	return hashNamedIDs(s, r)
}

// hashNamedIDs hashes every session id namedID names: quoted (unquoted as
// Go and JSON quote; \"...\" taken as it stands; `IDs "a" and "b"` both),
// or raw after ':' or '=' (a registered id there, else up to a space or one
// of `"',;)]&#<>`; URL-unescaped after '='). In go-sdk's "(session ID:
// <id>)" the last ')' before the next space closes the id. On a line with a
// control byte or DEL ([hostileLine]) the space is no end: the id runs to
// the line's end (in go-sdk's form, to its last ')').
func hashNamedIDs(s string, r *Redactor) string {
	var b strings.Builder
	last := 0
	for _, m := range namedID.FindAllStringSubmatchIndex(s, -1) {
		i := m[1]
		if m[0] < last {
			continue
		}
		end, id := i, ""
		q := ""
		if strings.HasPrefix(s[i:], `"`) || strings.HasPrefix(s[i:], `\"`) {
			q = s[i : i+1+strings.IndexByte(s[i:], '"')] // `"`, or `\"` inside a quoted message
		}
		goSDK, assigned := m[2] >= 0, m[4] >= 0 && m[6] >= 0 // "(session ID: <id>)"; a session id then ':' or '='
		switch f, registered := r.idAt(s, i, 1); {
		case q != "" && !goSDK:
			for n := 0; n < 2; n++ {
				e, v := quotedAt(s, i, q)
				b.WriteString(s[last:i])
				b.WriteString(q + hashUnlessHashed(v) + q)
				last = e
				if !strings.HasPrefix(s[e:], " and "+q) {
					break
				}
				i = e + len(" and ")
			}
			continue
		case (goSDK || assigned) && registered:
			end, id = i+len(f.form), f.id
		case goSDK || assigned:
			stop := func(c rune) bool { return c <= ' ' || c > '~' || strings.ContainsRune(`"',;)]&#<>`, c) }
			if goSDK {
				stop = func(c rune) bool { return c <= ' ' }
			}
			end = i + strings.IndexFunc(s[i:]+" ", stop)
			if hostileLine(s[i:]) {
				end = i + lineLen(s[i:])
			}
			if k := strings.LastIndexByte(s[i:end], ')'); goSDK && k >= 0 {
				end = i + k
			}
			id = s[i:end]
			if u, err := url.QueryUnescape(id); err == nil && assigned && s[m[6]] == '=' {
				id = u
			}
		}
		if id != "" {
			b.WriteString(s[last:i])
			last = writeHash(&b, s, i, end, hashUnlessHashed(id))
		}
	}
	return b.String() + s[last:]
}

// hostileLine reports whether the line s starts holds a control byte other
// than a tab, or DEL: no session id holds one ("visible ASCII characters
// (ranging from 0x21 to 0x7E)", streamable-http.mdx, Session Management),
// nor does prose, so a named id there is a hostile one whose end cannot be
// told, and it runs to the line's end.
func hostileLine(s string) bool {
	return strings.ContainsFunc(s[:lineLen(s)], func(c rune) bool { return c < ' ' && c != '\t' || c == 0x7f })
}

// lineLen is the length of the line s starts, to a CR or LF or the end.
func lineLen(s string) int {
	if n := strings.IndexAny(s, "\r\n"); n >= 0 {
		return n
	}
	return len(s)
}

// quotedAt reads the string quoted by q at s[i]: the index after it and its
// value (unquoted for `"` when it unquotes); unterminated, it runs to the end.
func quotedAt(s string, i int, q string) (end int, val string) {
	j := i + len(q)
	for j < len(s) && !strings.HasPrefix(s[j:], q) {
		if q == `"` && s[j] == '\\' {
			j++
		}
		j++
	}
	if j >= len(s) {
		return len(s), s[i+len(q):]
	}
	if v, err := strconv.Unquote(s[i : j+1]); q == `"` && err == nil {
		return j + 1, v
	}
	return j + len(q), s[i+len(q) : j]
}

func hashUnlessHashed(id string) string {
	if id == "" || id == Masked || hashedID.MatchString(id) {
		return id
	}
	return HashSessionID(id)
}

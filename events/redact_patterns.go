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

// namedValue finds where a value is named: by go-sdk's "(session ID: ", a
// credential's name (its parts letters and digits, so a name before one
// cannot swallow it: "failed: Authorization: x"), or a session word
// ("session ID(s)", "Mcp-Session-Id", "sessionId" ...); then maybe a JSON
// key's end, then ':' or '=' (and Go's map '['), or spaces. namedID is it
// without credential names, the cheaper expression for a text that holds
// no credential word.
var namedValue, namedID = named(`\b((?:[a-z0-9]+[\-_.])*(?:` + strings.Join(credentialWords, "|") + `)(?:[\-_.][a-z0-9]+)*)`), named(`([^\s\S])`)

func named(credentialName string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(\(session ID: )|(?:` + credentialName + `|session(?:[ _-]?(ids?))?)(?:\\?")?(?:\s*([:=])\s*\[?|\s+)`)
}

// Submatches of named: a credential's name, a session word's "ID".
const credentialGroup, idGroup = 2, 3

// names reports whether name, as a whole (a log attribute's key), matches
// group of namedValue: it names a credential or a session id.
func names(name string, group int) bool {
	m := namedValue.FindStringSubmatchIndex(name + "=")
	return m != nil && m[1] == len(name)+1 && m[2*group] >= 0
}

var (
	// scheme://userinfo@ (RFC 3986 section 3.2.1); the user is often a
	// token itself.
	userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#@"'<>]+@`)
	// An HTTP credential in text (RFC 9110 section 11): "Bearer <token68>",
	// "Basic <base64>"; "basic auth" is a word, not a credential.
	httpCredential = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)([A-Za-z0-9\-._~+/]+=*)`)
)

// redactPatterns applies the pattern rules of [Redactor] to s: userinfo,
// named values, then HTTP credentials; r (may be nil) knows the registered
// ids, hashed whole where they are named. Each rule runs only where a cheap
// scan says it may match.
func redactPatterns(s string, r *Redactor) string {
	lower := strings.ToLower(s)
	hinted := func(h string) bool { return strings.Contains(lower, h) }
	if hinted("://") {
		s = userinfo.ReplaceAllString(s, "${1}"+Masked+"@")
	}
	if slices.ContainsFunc(credentialWords, hinted) {
		s = sealNamedValues(s, r, namedValue)
	} else if hinted("session") {
		s = sealNamedValues(s, r, namedID)
	}
	if hinted("bearer") || hinted("basic") {
		s = httpCredential.ReplaceAllStringFunc(s, func(m string) string {
			sub := httpCredential.FindStringSubmatch(m)
			if strings.EqualFold(sub[1], "basic") && len(sub[3]) < 8 {
				return m
			}
			return sub[1] + sub[2] + Masked
		})
	}
	return s
}

// sealNamedValues masks every credential's value and hashes every session
// id that named (namedValue or namedID) names. The value is quoted
// (unquoted as Go and JSON quote; \"...\" taken as it stands; `IDs "a" and
// "b"` both); a registered id; or raw after ':' or '=' (a session word's
// with "ID"). A raw credential runs to a quote, a ']' or the line's end
// after ':' (a header), to a space or one of `"'&#<>` after '='; a raw
// session id to a space, a byte that is not visible ASCII or one of
// `"',;)]&#<>`, URL-unescaped after '='. In go-sdk's "(session ID: <id>)"
// the last ')' before the next space closes the id. On a line with a
// control byte or DEL ([lineScan]) a raw value runs to the line's end
// (in go-sdk's form, to its last ')'). A value already [Masked] is kept.
func sealNamedValues(s string, r *Redactor, named *regexp.Regexp) string {
	var b strings.Builder
	last := 0
	lines := lineScan{s: s, start: -1, end: -1}
	for _, m := range named.FindAllStringSubmatchIndex(s, -1) {
		i := m[1]
		if m[0] < last || strings.HasPrefix(s[i:], Masked) || strings.HasPrefix(s[i-1:], Masked) {
			continue
		}
		goSDK, cred, sep := m[2] >= 0, m[2*credentialGroup] >= 0, ""
		if m[8] >= 0 {
			sep = s[m[8]:m[9]]
		}
		raw := goSDK || sep != "" && (cred || m[2*idGroup] >= 0) // a session word names an id only with "ID"
		seal := hashUnlessHashed
		if cred {
			seal = func(string) string { return Masked }
		}
		q := ""
		if strings.HasPrefix(s[i:], `"`) || strings.HasPrefix(s[i:], `\"`) {
			q = s[i : i+1+strings.IndexByte(s[i:], '"')] // `"`, or `\"` inside a quoted message
		}
		end, v := i, ""
		switch f, registered := r.idAt(s, i, 1); {
		case q != "" && !goSDK && (raw || !cred):
			for {
				e, v := quotedAt(s, i, q)
				b.WriteString(s[last:i])
				b.WriteString(q + seal(v) + q)
				last = e
				if !strings.HasPrefix(s[e:], " and "+q) {
					break
				}
				i = e + len(" and ")
			}
			continue
		case !raw:
			continue
		case !cred && registered:
			end, v = i+len(f.form), f.id
		default:
			stop := func(c rune) bool { return c <= ' ' || c > '~' || strings.ContainsRune(`"',;)]&#<>`, c) }
			if goSDK {
				stop = func(c rune) bool { return c <= ' ' }
			} else if cred && sep == ":" {
				stop = func(c rune) bool { return strings.ContainsRune("\"]\r\n", c) }
			} else if cred {
				stop = func(c rune) bool { return strings.ContainsRune("\t\n\f\r \"'&#<>", c) }
			}
			end = len(s) // every stop stops at a line's end
			if n := strings.IndexFunc(s[i:], stop); n >= 0 {
				end = i + n
			}
			if lineEnd, hostile := lines.at(i); hostile {
				end = lineEnd
			}
			if k := strings.LastIndexByte(s[i:end], ')'); goSDK && k >= 0 {
				end = i + k
			}
			v = s[i:end]
			if u, err := url.QueryUnescape(v); err == nil && sep == "=" {
				v = u
			}
		}
		if v != "" {
			b.WriteString(s[last:i])
			last = writeHash(&b, s, i, end, seal(v))
		}
	}
	return b.String() + s[last:]
}

// lineScan answers, for positions read left to right in s, where the line
// holding each ends (at a CR or LF, or s's end) and whether the rest of that
// line holds a control byte other than a tab, or DEL: no session id holds
// one ("visible ASCII characters (ranging from 0x21 to 0x7E)",
// streamable-http.mdx, Session Management), nor does prose, so a value
// named there is a hostile one whose end cannot be told, and it runs to the
// line's end.
type lineScan struct {
	s           string
	start, end  int // the line part last scanned: s[start:end]
	lastHostile int // the index of its last hostile byte, or -1
}

// at returns the end of the line holding i and whether s[i:end] is
// hostile. Each line part is scanned once, however many values it names:
// a 1 MiB line costs one pass, not one per value.
func (l *lineScan) at(i int) (end int, hostile bool) {
	if i < l.start || i > l.end {
		l.start, l.end, l.lastHostile = i, i+lineLen(l.s[i:]), -1
		for j := l.end - 1; j >= i; j-- {
			if c := l.s[j]; c < ' ' && c != '\t' || c == 0x7f {
				l.lastHostile = j
				break
			}
		}
	}
	return l.end, l.lastHostile >= i
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

package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsup/mcpsup/classify"
)

// Masked replaces a secret in redacted text.
const Masked = "[redacted]"

// MinSessionIDLen is the shortest registered session id that [Redactor]
// replaces wherever it stands as a whole token. A shorter id ("a", "42")
// would rewrite ordinary words and numbers; it is hashed only where it
// stands as the value of a session id (see [Redactor]), like an id never
// registered.
const MinSessionIDLen = 8

// HashSessionID returns the short stable form of an MCP session id
// (Mcp-Session-Id) used in events and logs: "sid:" and the first 8 hex digits
// of the id's SHA-256, e.g. "sid:2c26b46b". The same id always gives the same
// hash, so a person can follow one session across events without seeing it.
func HashSessionID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "sid:" + hex.EncodeToString(sum[:4])
}

// isHashedID reports whether s is already of the form "sid:<8 hex>".
func isHashedID(s string) bool {
	if len(s) != 12 || !strings.HasPrefix(s, "sid:") {
		return false
	}
	for i := 4; i < 12; i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Redactor keeps secrets out of text meant for people: event fields, error
// texts and log records. It rewrites:
//
//   - registered session ids ([Redactor.AddSessionID]) of at least
//     [MinSessionIDLen] bytes wherever they stand as a whole token (not
//     preceded or followed by a letter or digit that continues them), raw or
//     in the escaped forms of Go's %q, JSON strings and URL query and path
//     encoding: each becomes its [HashSessionID];
//   - every session id, registered or not, of any length, where it stands as
//     the value of a session id in the forms go-sdk and HTTP libraries write
//     (see [Redactor.Text]): hashed;
//   - registered secrets ([Redactor.AddSecret]) wherever they appear, even
//     inside a longer word, and the start of one (6 bytes or more) that ends
//     a text cut short, and each line of a secret of several lines:
//     [Masked];
//   - by pattern, credentials never registered: URL userinfo
//     ("https://user:pass@host" becomes "https://[redacted]@host"), the
//     values of credential names in URL queries and key=value text
//     ("?access_token=[redacted]") and in header renderings
//     ("X-Api-Key: [redacted]", "map[Authorization:[[redacted]]]", JSON),
//     and "Bearer <token>" and "Basic <credentials>" anywhere: [Masked].
//     A credential name is one that has, split at '-', '_' and '.', a part
//     equal (ignoring case) to one of: token, key, apikey, secret, password,
//     passwd, pwd, sig, signature, auth, authorization, credential,
//     credentials, jwt, bearer, cookie. So access_token, api_key, apikey,
//     client_secret, X-Amz-Signature, Authorization, Proxy-Authorization,
//     Set-Cookie are; author, keyboard, monkey are not. A credential in a
//     URL path is not recognized by pattern: register the endpoint with
//     [Redactor.AddEndpointSecrets], or the credential with AddSecret.
//
// Only free text is rewritten ([Redactor.Redact] names the fields); the
// patterns change only text for people, no decision rests on it.
//
// Cost: registering or forgetting an id is independent of how many ids are
// registered; redacting a text costs its length times the number of distinct
// id lengths (one or two in practice), not the number of ids. Secrets are
// meant to be few (the host's own credentials): each costs a scan.
//
// The zero value is ready to use (patterns only). A nil *Redactor applies the
// patterns only. A Redactor is safe for concurrent use and must not be copied
// after first use.
type Redactor struct {
	mu sync.RWMutex
	// sids are the registered session ids; ids holds each form of each,
	// with its hash. Small slices searched in order rather than maps: an
	// idle supervisor holds one id, whose forms are often one string.
	sids []string
	ids  []idForm
	// lens counts the forms by length, longest first; firstN counts them
	// by first byte, and first has the bytes that start one. Small sorted
	// slices rather than a table or maps: one Redactor is held per
	// supervisor, with the few forms of one or two session ids.
	lens   tally
	firstN tally
	first  byteSet
	// secrets are the forms of registered secrets, longest first, so that
	// a secret containing another is masked whole.
	secrets []string
	secretN map[string]int          // form -> how many secrets registered it
	secretF map[string]*secretForms // secret -> its forms and registrations
}

// secretForms are a registered secret's forms (raw and escaped), and how
// many of its registrations are not yet forgotten.
type secretForms struct {
	forms []string
	n     int
}

// AddSessionID registers a session id (Mcp-Session-Id) to hash wherever it
// appears (see [Redactor]). Registering an id again does nothing; empty ids
// are ignored. Forget it with [Redactor.ForgetSessionID] when its session is
// over, so the Redactor holds only the ids still in use.
func (r *Redactor) AddSessionID(id string) {
	if id == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(r.sids, id) {
		return
	}
	r.sids = append(r.sids, id)
	h := HashSessionID(id)
	for _, f := range escapedForms(id) {
		if r.hashOf(f) != "" {
			continue // another id's form: it keeps its hash
		}
		r.ids = append(r.ids, idForm{form: f, id: id, hash: h})
		r.count(f, 1)
	}
}

// idForm is one form of a registered session id.
type idForm struct{ form, id, hash string }

// hashOf returns the hash of the id that registered form f, or "". Called
// with mu held.
func (r *Redactor) hashOf(f string) string {
	for _, e := range r.ids {
		if e.form == f {
			return e.hash
		}
	}
	return ""
}

// count adds (by +1) or removes (by -1) form f from lens and first. Called
// with mu held.
func (r *Redactor) count(f string, by int) {
	r.lens.add(len(f), by)
	if r.firstN.add(int(f[0]), by) {
		r.first.flip(f[0])
	}
}

// tally counts values in a slice sorted by value, largest first.
type tally []struct{ v, n int }

// add adds by (+1 or -1) to v's count and reports whether v appeared or
// disappeared.
func (t *tally) add(v, by int) bool {
	i, found := slices.BinarySearchFunc(*t, v, func(e struct{ v, n int }, v int) int { return v - e.v })
	switch {
	case !found && by > 0:
		*t = slices.Insert(*t, i, struct{ v, n int }{v, by})
		return true
	case !found:
		return false
	}
	if (*t)[i].n += by; (*t)[i].n <= 0 {
		*t = slices.Delete(*t, i, i+1)
		return true
	}
	return false
}

// byteSet is a set of bytes, one bit each.
type byteSet [4]uint64

func (b *byteSet) flip(c byte)     { b[c>>6] ^= 1 << (c & 63) }
func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }

// ForgetSessionID unregisters a session id registered with
// [Redactor.AddSessionID]. The id is still hashed where it stands as the
// value of a session id, like any id never registered.
func (r *Redactor) ForgetSessionID(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.Index(r.sids, id)
	if i < 0 {
		return
	}
	r.sids = slices.Delete(r.sids, i, i+1)
	r.ids = slices.DeleteFunc(r.ids, func(e idForm) bool {
		if e.id != id {
			return false
		}
		r.count(e.form, -1)
		return true
	})
}

// SessionIDs returns the number of registered session ids.
func (r *Redactor) SessionIDs() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.sids)
}

// AddSecret registers a credential (a token, a cookie or header value) to
// mask wherever it appears, also inside a longer word, raw or escaped as for
// session ids. Empty values are ignored. A secret registered again (the
// same value from two places: an endpoint's key that is also an access
// token) stays masked until [Redactor.ForgetSecret] was called as many
// times. A secret of several lines (a PEM key) also masks each of its lines
// of at least [MinSessionIDLen] bytes (trimmed of spaces) on its own: a
// text read line by line (a process's stderr, logged a record a line) holds
// its lines apart, where a middle one matches no form of the whole.
func (r *Redactor) AddSecret(s string) {
	if s == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if sf, ok := r.secretF[s]; ok {
		sf.n++
		return
	}
	if r.secretN == nil {
		r.secretN, r.secretF = map[string]int{}, map[string]*secretForms{}
	}
	forms := secretFormsOf(s)
	r.secretF[s] = &secretForms{forms: forms, n: 1}
	for _, f := range forms {
		if r.secretN[f]++; r.secretN[f] == 1 {
			i, _ := slices.BinarySearchFunc(r.secrets, f, longestFirst)
			r.secrets = slices.Insert(r.secrets, i, f)
		}
	}
}

// AddLikelySecret registers a value found in configuration that may be a
// credential (a header, a URL query or userinfo, an environment variable)
// as a secret ([Redactor.AddSecret]) when it has at least
// [MinSessionIDLen] bytes. A shorter one ("2" of X-Client-Version, "1" of
// DEBUG) is not: a secret is masked even inside a longer word, so it would
// mask ordinary words and numbers in every text; a short credential is
// still masked where the patterns find it by name. It reports whether it
// registered v.
func (r *Redactor) AddLikelySecret(v string) bool {
	if len(v) < MinSessionIDLen {
		return false
	}
	r.AddSecret(v)
	return true
}

// minPathSecret is the shortest segment of the endpoint's path taken for
// a credential: a "secret URL" server carries its key there (/s/<key>/mcp),
// which the patterns cannot tell from a word; a key is long, and a shorter
// segment ("mcp", "servers", "v1") is a word that masking would take out of
// every text.
const minPathSecret = 16

// keyLike reports whether a path segment of minPathSecret bytes or more
// reads as a key rather than a name: it has a digit, or letters of both
// cases. A random hex key of 16 has no digit with odds of 2 in 10^7, a
// base64 one all its letters in one case with smaller odds still; a name
// ("model-context-protocol-server") is lower case without digits.
func keyLike(seg string) bool {
	var digit, upper, lower bool
	for _, c := range seg {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		}
	}
	return digit || (upper && lower)
}

// AddEndpointSecrets registers what an MCP endpoint URL may carry as a
// credential beyond what the patterns find by name: the userinfo, every
// path segment of at least 16 bytes (minPathSecret) that reads as a key (a
// digit, or both cases: [keyLike]), as written and unescaped (each form
// held to that rule), and every query value,
// whatever its parameter is called (?accessToken=, ?code=,
// ?k=: the patterns know only names with a credential word as a part split
// at '-', '_' and '.'). A value shorter than [MinSessionIDLen] bytes is
// not registered ([Redactor.AddLikelySecret]). The query is split by hand, so
// that a value url.ParseQuery would drop (a bad escape), or an endpoint
// url.Parse refuses, still has its values registered as written.
func (r *Redactor) AddEndpointSecrets(endpoint string) {
	add := r.AddLikelySecret
	beforeFragment, _, _ := strings.Cut(endpoint, "#")
	beforeQuery, _, _ := strings.Cut(beforeFragment, "?")
	if _, rest, ok := strings.Cut(beforeQuery, "://"); ok {
		if _, path, ok := strings.Cut(rest, "/"); ok {
			for seg := range strings.SplitSeq(path, "/") {
				r.addPathSecret(seg)
				if plain, err := url.PathUnescape(seg); err == nil && plain != seg {
					r.addPathSecret(plain)
				}
			}
		}
	}
	if _, query, ok := strings.Cut(beforeFragment, "?"); ok {
		for pair := range strings.SplitSeq(query, "&") {
			_, v, _ := strings.Cut(pair, "=")
			add(v)
			if plain, err := url.QueryUnescape(v); err == nil && plain != v {
				add(plain)
			}
		}
	}
	if u, err := url.Parse(endpoint); err == nil && u.User != nil {
		add(u.User.Username())
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
}

// AddCommandLineSecrets registers what a command line (a stdio server's
// arguments) may carry as a credential:
//
//   - the value of an argument named as a credential (see [Redactor]'s
//     credential names; a camelCase name such as accessToken or
//     githubToken counts by its last word), written as `--name value`,
//     `-name value`, `--name=value` or `name=value`, or as a header,
//     `Name: value` (a scheme word before the value, "Bearer" or "token",
//     is not part of it), when the value reads as a key: at least
//     [MinSessionIDLen] bytes with a digit or letters of both cases, so that
//     `--auth-method password`, `--token-file /path` or `--secret-name
//     production` mask no ordinary word;
//   - what a URL among the arguments, or as such a value, carries
//     ([Redactor.AddEndpointSecrets]: an mcp-remote style proxy's upstream,
//     a database URL's userinfo).
//
// A value that starts with '-' is taken for the next flag.
func (r *Redactor) AddCommandLineSecrets(args []string) {
	for i, arg := range args {
		if strings.Contains(arg, "://") {
			r.AddEndpointSecrets(arg)
			continue
		}
		if v, ok := headerValue(arg); ok {
			r.addCredentialValue(v)
			continue
		}
		flag := strings.TrimLeft(arg, "-")
		if name, value, ok := strings.Cut(flag, "="); ok {
			switch {
			case strings.Contains(value, "://"):
				r.AddEndpointSecrets(value)
			case credentialArg(name):
				r.addCredentialValue(value)
			default:
				if v, ok := headerValue(value); ok { // --header=Authorization: Bearer x
					r.addCredentialValue(v)
				}
			}
			continue
		}
		if flag != arg && credentialArg(flag) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			r.addCredentialValue(args[i+1])
		}
	}
}

// credentialArg reports whether a flag or variable name is a credential's:
// by [isCredentialName], or by the last word of a camelCase name.
func credentialArg(name string) bool {
	if isCredentialName(name) {
		return true
	}
	last := len(name)
	for last > 0 && !('A' <= name[last-1] && name[last-1] <= 'Z') {
		last--
	}
	return last > 1 && isCredentialName(name[last-1:])
}

// headerValue returns the value of s written as a header whose name is a
// credential's (`Authorization: Bearer x`, `X-Api-Key: x`).
func headerValue(s string) (string, bool) {
	name, value, ok := strings.Cut(s, ":")
	if !ok || !isCredentialName(strings.TrimSpace(name)) {
		return "", false
	}
	return value, true
}

// addCredentialValue registers v, a credential's value, without the scheme
// word that may start it ("Bearer x", "token x"), when it reads as a key.
func (r *Redactor) addCredentialValue(v string) {
	v = strings.TrimSpace(v)
	if _, rest, ok := strings.Cut(v, " "); ok {
		v = strings.TrimSpace(rest)
	}
	if len(v) >= MinSessionIDLen && keyLike(v) {
		r.AddSecret(v)
	}
}

// addPathSecret registers seg, a path segment of an endpoint escaped or
// not, when it has minPathSecret bytes or more and reads as a key.
func (r *Redactor) addPathSecret(seg string) {
	if len(seg) >= minPathSecret && keyLike(seg) {
		r.AddSecret(seg)
	}
}

// ForgetSecret undoes one registration of a secret with
// [Redactor.AddSecret]; it is no longer masked once each of its
// registrations was undone.
func (r *Redactor) ForgetSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sf, ok := r.secretF[s]
	if !ok {
		return
	}
	if sf.n--; sf.n > 0 {
		return
	}
	delete(r.secretF, s)
	for _, f := range sf.forms {
		if r.secretN[f]--; r.secretN[f] == 0 {
			delete(r.secretN, f)
			if i, found := slices.BinarySearchFunc(r.secrets, f, longestFirst); found {
				r.secrets = slices.Delete(r.secrets, i, i+1)
			}
		}
	}
}

func longestFirst(a, b string) int {
	if len(a) != len(b) {
		return len(b) - len(a)
	}
	return strings.Compare(a, b)
}

// secretFormsOf returns the distinct forms a secret is masked in: its
// escaped forms and, when it spans lines, those of each of its lines of at
// least MinSessionIDLen bytes, trimmed of spaces (a shorter line, "}" or
// "==", would mask ordinary text), longest first.
func secretFormsOf(s string) []string {
	forms := escapedForms(s)
	if !strings.ContainsAny(s, "\r\n") {
		return forms
	}
	for _, line := range strings.FieldsFunc(s, func(c rune) bool { return c == '\n' || c == '\r' }) {
		if line = strings.TrimSpace(line); len(line) >= MinSessionIDLen {
			forms = append(forms, escapedForms(line)...)
		}
	}
	slices.SortFunc(forms, longestFirst)
	return slices.Compact(forms)
}

// escapedForms returns s and the distinct forms it takes escaped by Go's %q,
// in a JSON string and in a URL query or path.
func escapedForms(s string) []string {
	if unreserved(s) {
		return []string{s} // every escaping leaves it as it is
	}
	return everyForm(s)
}

// everyForm is escapedForms computed by escaping s every way.
func everyForm(s string) []string {
	q := strconv.Quote(s)
	j, _ := json.Marshal(s)
	forms := []string{s, q[1 : len(q)-1], string(j[1 : len(j)-1]), url.QueryEscape(s), url.PathEscape(s)}
	slices.SortFunc(forms, longestFirst)
	return slices.Compact(forms)
}

// unreserved reports whether s has only URI unreserved characters (RFC 3986
// section 2.3: letters, digits, "-", ".", "_", "~"), which %q, JSON and URL
// query and path escaping all leave alone: most session ids.
func unreserved(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// Text redacts one string by the rules of [Redactor]. It is idempotent:
// Text(Text(s)) == Text(s). The rules run again on their own output until
// it no longer changes (at most maxRedactPasses times): one rule's mask can
// make another rule's match (a credential header's value that runs into a
// masked userinfo), so one pass alone is not a fixed point. A text nothing
// is redacted in costs one pass, one with something redacted two.
func (r *Redactor) Text(s string) string {
	if s == "" {
		return s
	}
	if r != nil {
		r.mu.RLock()
		defer r.mu.RUnlock()
	}
	for range maxRedactPasses {
		out := r.pass(s)
		if out == s {
			break
		}
		s = out
	}
	return s
}

// MaskSecrets masks the registered secrets in s ([Redactor.AddSecret],
// raw and escaped, and the start of one that ends s), and nothing else: no
// pattern and no session id. For text that is a name rather than prose (a
// tool's name), where the patterns would rewrite ordinary words
// ("auth:login" reads as a credential header). Safe on a nil Redactor,
// which masks nothing.
func (r *Redactor) MaskSecrets(s string) string {
	if r == nil || s == "" {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.maskSecrets(s)
}

// maxRedactPasses bounds the passes of [Redactor.Text]. Each pass that
// changes the text masks or hashes more of it; no text the fuzzer found
// needs more than three.
const maxRedactPasses = 8

// pass applies every rule once; r may be nil (the pattern rules alone).
// Called with mu read-held.
func (r *Redactor) pass(s string) string {
	if r == nil {
		return redactPatterns(s, nil)
	}
	s = r.maskSecrets(s)
	s = r.hashIDs(s)
	return redactPatterns(s, r.registeredAt)
}

// minSecretTail is the shortest piece of a secret that is masked where a
// text was cut: a text cut to a bound (classify.MaxDetail, an event's
// quote of a line) may end inside one, and a piece cut from a longer text
// (a long stderr line logged in parts) may begin inside one.
const minSecretTail = 6

// cutMarkers are what a text cut to a bound is marked with where the rest
// was left off: the text between two of them, or between one and the
// text's start or end, may begin or end inside a secret.
var cutMarkers = []string{"...", "…"}

// maskSecrets masks every registered secret, the start of one that ends
// the text or comes before a cut marker, and the end of one that begins
// the text or comes after a cut marker. Called with mu read-held.
func (r *Redactor) maskSecrets(s string) string {
	for _, k := range r.secrets {
		if strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, Masked)
		}
	}
	if len(r.secrets) == 0 {
		return s
	}
	var b strings.Builder
	rest, done := s, 0 // done: bytes of s written to b
	for {
		i, m := nextCutMarker(rest)
		piece := rest
		if i >= 0 {
			piece = rest[:i]
		}
		if masked := r.maskPieceEnds(piece); masked != piece {
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[done : len(s)-len(rest)])
			b.WriteString(masked)
			done = len(s) - len(rest) + len(piece)
		}
		if i < 0 {
			break
		}
		rest = rest[i+m:]
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// nextCutMarker returns the index and length of the first cut marker in s,
// or -1.
func nextCutMarker(s string) (at, n int) {
	at = -1
	for _, m := range cutMarkers {
		if i := strings.Index(s, m); i >= 0 && (at < 0 || i < at) {
			at, n = i, len(m)
		}
	}
	return at, n
}

// maskPieceEnds masks the start of a secret that ends piece and the end of
// one that begins it, each of at least minSecretTail bytes.
func (r *Redactor) maskPieceEnds(piece string) string {
	if len(piece) < minSecretTail {
		return piece
	}
	for _, k := range r.secrets {
		// The longest start of k that ends piece: the first place in its
		// last len(k)-1 bytes where k begins and runs to piece's end. Only
		// a byte equal to k's first is compared further.
		for i := max(0, len(piece)-(len(k)-1)); i <= len(piece)-minSecretTail; i++ {
			if piece[i] == k[0] && strings.HasPrefix(k, piece[i:]) {
				piece = piece[:i] + Masked
				break
			}
		}
		// The longest end of k that begins piece.
		for j := max(1, len(k)-len(piece)); j <= len(k)-minSecretTail; j++ {
			if k[j] == piece[0] && strings.HasPrefix(piece, k[j:]) {
				piece = Masked + piece[len(k)-j:]
				break
			}
		}
	}
	return piece
}

// hashIDs replaces every registered id of at least MinSessionIDLen bytes
// that stands as a whole token, longest first. Called with mu read-held.
func (r *Redactor) hashIDs(s string) string {
	if len(r.ids) == 0 || len(r.lens) == 0 || r.lens[0].v < MinSessionIDLen {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !r.first.has(s[i]) || (i > 0 && isWord(s[i]) && isWord(s[i-1])) {
			i++ // no form starts with this byte, or inside a word
			continue
		}
		n := r.tokenAt(s, i, MinSessionIDLen)
		if n == 0 {
			i++
			continue
		}
		b.WriteString(s[last:i])
		writeToken(&b, s, i, i+n, r.hashOf(s[i:i+n]))
		i += n
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// tokenAt returns the length of the longest registered form, at least min
// bytes long, that starts at s[i] and is not continued by a letter or digit,
// or 0. Called with mu read-held.
func (r *Redactor) tokenAt(s string, i, min int) int {
	for _, l := range r.lens {
		n := l.v
		if n < min {
			break
		}
		end := i + n
		if end > len(s) || (end < len(s) && isWord(s[end]) && isWord(s[end-1])) {
			continue
		}
		if r.hashOf(s[i:end]) != "" {
			return n
		}
	}
	return 0
}

// registeredAt returns the length of a registered id (of any length) that
// starts at s[i], for the session id contexts of redactPatterns. Called with
// mu read-held.
func (r *Redactor) registeredAt(s string, i int) int {
	if len(r.ids) == 0 || !r.first.has(s[i]) {
		return 0
	}
	return r.tokenAt(s, i, 1)
}

// writeToken writes t in place of s[i:end]. An id whose first or last byte
// is no letter or digit is a token even where a letter or digit touches it,
// but its hash begins and ends with one: a space keeps the hash from
// joining that neighbour, which would make the next pass read it as part
// of a longer id and hash it again (Text is idempotent).
func writeToken(b *strings.Builder, s string, i, end int, t string) {
	if t != "" && i > 0 && isWord(s[i-1]) && isWord(t[0]) {
		b.WriteByte(' ')
	}
	b.WriteString(t)
	if t != "" && end < len(s) && isWord(s[end]) && isWord(t[len(t)-1]) {
		b.WriteByte(' ')
	}
}

// isWord reports an ASCII letter or digit: what continues a token.
func isWord(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Redact returns a copy of e whose free-text fields are redacted by the
// rules of [Redactor]: Server, Name, Detail, Added, Removed, Changed (also
// those of Prompts, Resources and ResourceTemplates), the warnings of Lists, and the detail and JSON-RPC message of every verdict.
// SessionID becomes a hash unless it is one already. The fixed vocabulary
// (Kind, From, To, Trigger, Guard, Reason, Op, Delivery, verdict classes and
// methods, list names and statuses) is never rewritten. e and its slices are
// not modified. It is idempotent.
func (r *Redactor) Redact(e Event) Event {
	e.Server, e.Name, e.Detail = r.Text(e.Server), r.Text(e.Name), r.Text(e.Detail)
	e.Verdict = r.Verdict(e.Verdict)
	if e.SessionID != "" && !isHashedID(e.SessionID) {
		e.SessionID = HashSessionID(e.SessionID)
	}
	e.Added, e.Removed, e.Changed = r.texts(e.Added), r.texts(e.Removed), r.texts(e.Changed)
	e.Prompts, e.Resources, e.ResourceTemplates = r.change(e.Prompts), r.change(e.Resources), r.change(e.ResourceTemplates)
	if e.Lists != nil {
		lists := make([]ListOutcome, len(e.Lists))
		for i, l := range e.Lists {
			l.Verdict, l.Warning = r.Verdict(l.Verdict), r.Text(l.Warning)
			lists[i] = l
		}
		e.Lists = lists
	}
	return e
}

// change returns a redacted copy of c; nil stays nil.
func (r *Redactor) change(c *ListChange) *ListChange {
	if c == nil {
		return nil
	}
	return &ListChange{Added: r.texts(c.Added), Removed: r.texts(c.Removed), Changed: r.texts(c.Changed), Omitted: c.Omitted}
}

// Verdict returns v with its free text (Detail, RPC.Message) redacted.
func (r *Redactor) Verdict(v classify.Verdict) classify.Verdict {
	v.Detail, v.RPC.Message = r.Text(v.Detail), r.Text(v.RPC.Message)
	return v
}

func (r *Redactor) texts(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = r.Text(s)
	}
	return out
}

// Redacting returns a [Sink] that passes every event through r.Redact before
// next sees it. A nil r applies the patterns only. Put it in front of every
// sink whose output leaves the process (files, logs). It is as safe for
// concurrent use as next is.
func Redacting(r *Redactor, next Sink) Sink {
	return redacting{r: r, next: next}
}

type redacting struct {
	r    *Redactor
	next Sink
}

func (s redacting) Emit(e Event) { s.next.Emit(s.r.Redact(e)) }

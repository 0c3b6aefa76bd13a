package events

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsup/mcpsup/classify"
)

// Masked replaces a secret in redacted text.
const Masked = "[redacted]"

// MinSessionIDLen is the shortest registered session id, or likely secret,
// replaced wherever it stands: a shorter one ("42") would rewrite ordinary
// words. A shorter id is hashed only where a session id is named.
const MinSessionIDLen = 8

// HashSessionID returns the short stable form of an MCP session id
// (Mcp-Session-Id) used in events and logs: "sid:" and the first 8 hex
// digits of the id's SHA-256, e.g. "sid:2c26b46b".
func HashSessionID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "sid:" + hex.EncodeToString(sum[:4])
}

var hashedID = regexp.MustCompile(`^sid:[0-9a-f]{8}$`)

// Redactor keeps secrets out of event fields, error texts and log records
// (DESIGN.md section 7, Secrets). Each form below is raw or escaped (Go's
// %q, JSON, URL query and path). It hashes ([HashSessionID]) a registered
// session id of at least [MinSessionIDLen] bytes standing as a whole token;
// it masks ([Masked]) a registered secret wherever it stands, a piece of 6
// bytes or more where a text was cut ("...", "…" or an end), each line of a
// secret of several lines; and by pattern URL userinfo and "Bearer"/"Basic"
// credentials (RFC 9110 section 11). One reader reads a value where a name
// names it (`Name: v`, name=v, "name":"v", map[Name:[v]], go-sdk's
// "(session ID: <id>)", `session IDs "<a>" and "<b>"` ...): a session id's
// it hashes, a credential's (a part of the name, split at '-', '_', '.', is
// a word of credentialWords: access_token and X-Api-Key are, author is
// not) it masks.
//
// Text is idempotent. The zero value and a nil *Redactor apply the patterns
// only. A Redactor is safe for concurrent use.
type Redactor struct {
	mu      sync.RWMutex
	ids     []idForm       // the registered session ids' forms, longest first
	secrets map[string]int // registered secret -> registrations not forgotten
	masks   []string       // the secrets' forms, longest first
}

type idForm struct{ form, id, hash string }

// AddSessionID registers a session id to hash wherever it stands; again, or
// empty, it does nothing.
func (r *Redactor) AddSessionID(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addID(id)
}

func (r *Redactor) addID(id string) {
	if id == "" || slices.ContainsFunc(r.ids, func(e idForm) bool { return e.id == id }) {
		return
	}
	for _, f := range formsOf(id) {
		if !slices.ContainsFunc(r.ids, func(e idForm) bool { return e.form == f }) { // another id's form keeps its hash
			r.ids = append(r.ids, idForm{f, id, HashSessionID(id)})
		}
	}
	slices.SortStableFunc(r.ids, func(a, b idForm) int { return len(b.form) - len(a.form) })
}

// ForgetSessionID unregisters id; it is still hashed where it is named.
func (r *Redactor) ForgetSessionID(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = slices.DeleteFunc(r.ids, func(e idForm) bool { return e.id == id })
}

// KeepSessionIDs makes ids (empty skipped) the registered session ids.
func (r *Redactor) KeepSessionIDs(ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = slices.DeleteFunc(r.ids, func(e idForm) bool { return !slices.Contains(ids, e.id) })
	for _, id := range ids {
		r.addID(id)
	}
}

// SessionIDs returns the number of registered session ids.
func (r *Redactor) SessionIDs() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids := map[string]bool{}
	for _, f := range r.ids {
		ids[f.id] = true
	}
	return len(ids)
}

// AddSecret registers a credential to mask; "" is ignored. One registered
// twice stays until forgotten twice. A secret of several lines (a PEM key)
// masks each trimmed line of [MinSessionIDLen] bytes or more too: stderr is
// logged a line at a time.
func (r *Redactor) AddSecret(s string) {
	if s == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.secrets == nil {
		r.secrets = map[string]int{}
	}
	if r.secrets[s]++; r.secrets[s] == 1 {
		r.remask()
	}
}

// ForgetSecret undoes one [Redactor.AddSecret] of s.
func (r *Redactor) ForgetSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.secrets[s] == 0 {
		return
	}
	if r.secrets[s]--; r.secrets[s] == 0 {
		delete(r.secrets, s)
		r.remask()
	}
}

// remask rebuilds masks from secrets. Called with mu held.
func (r *Redactor) remask() {
	r.masks = nil
	for s := range r.secrets {
		r.masks = append(r.masks, formsOf(s)...)
		if !strings.ContainsAny(s, "\r\n") {
			continue
		}
		for _, line := range strings.FieldsFunc(s, func(c rune) bool { return c == '\n' || c == '\r' }) {
			if line = strings.TrimSpace(line); len(line) >= MinSessionIDLen {
				r.masks = append(r.masks, formsOf(line)...)
			}
		}
	}
	slices.SortFunc(r.masks, longestFirst)
	r.masks = slices.Compact(r.masks)
}

// AddLikelySecret registers v, a configuration value that may be a
// credential, when it has [MinSessionIDLen] bytes or more, and reports
// whether it did (a shorter one would mask ordinary words).
func (r *Redactor) AddLikelySecret(v string) bool {
	if len(v) < MinSessionIDLen {
		return false
	}
	r.AddSecret(v)
	return true
}

// AddEndpointSecrets registers, as written and unescaped, what an endpoint
// URL may carry as a credential: userinfo and query values (by
// [Redactor.AddLikelySecret]), and path segments of 16 bytes or more that
// read as keys (a "secret URL" /s/<key>/mcp). It splits by hand: a URL
// url.Parse refuses still has its values registered.
func (r *Redactor) AddEndpointSecrets(endpoint string) {
	both := func(v string, unescape func(string) (string, error), add func(string)) {
		add(v)
		if plain, err := unescape(v); err == nil && plain != v {
			add(plain)
		}
	}
	likely := func(v string) { r.AddLikelySecret(v) }
	pathKey := func(seg string) {
		if len(seg) >= 16 && keyLike(seg) {
			r.AddSecret(seg)
		}
	}
	rest, _, _ := strings.Cut(endpoint, "#")
	rest, query, _ := strings.Cut(rest, "?")
	if _, hostPath, ok := strings.Cut(rest, "://"); ok {
		userinfo, _, hasUser := strings.Cut(hostPath, "@")
		if _, path, ok := strings.Cut(hostPath, "/"); ok {
			for seg := range strings.SplitSeq(path, "/") {
				both(seg, url.PathUnescape, pathKey)
			}
		}
		if hasUser && !strings.Contains(userinfo, "/") {
			user, pass, _ := strings.Cut(userinfo, ":")
			both(user, url.PathUnescape, likely)
			both(pass, url.PathUnescape, likely)
		}
	}
	for pair := range strings.SplitSeq(query, "&") {
		_, v, _ := strings.Cut(pair, "=")
		both(v, url.QueryUnescape, likely)
	}
}

// keyLike reports whether v reads as a key rather than a word: it has a
// digit, or letters of both cases.
func keyLike(v string) bool {
	return strings.ContainsAny(v, "0123456789") ||
		strings.ToLower(v) != v && strings.ToUpper(v) != v
}

// AddCommandLineSecrets registers what a stdio server's arguments carry as
// credentials: a URL's ([Redactor.AddEndpointSecrets]), and the value of a
// credential name (githubToken by its last word) in `--name value`,
// `--name=value`, `name=value` or `Name: [scheme] value` when it reads as a
// key (keyLike, [MinSessionIDLen] bytes or more).
func (r *Redactor) AddCommandLineSecrets(args []string) {
	header := func(s string) (string, bool) {
		name, value, ok := strings.Cut(s, ":")
		return value, ok && names(strings.TrimSpace(name), credentialGroup)
	}
	for i, arg := range args {
		flag := strings.TrimLeft(arg, "-")
		name, value, assigned := strings.Cut(flag, "=")
		if strings.Contains(arg, "://") {
			r.AddEndpointSecrets(arg)
		} else if v, ok := header(arg); ok {
			r.addCredentialValue(v)
		} else if assigned && credentialArg(name) {
			r.addCredentialValue(value)
		} else if v, ok := header(value); assigned && ok { // --header=Authorization: Bearer x
			r.addCredentialValue(v)
		} else if !assigned && flag != arg && credentialArg(flag) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			r.addCredentialValue(args[i+1])
		}
	}
}

// credentialArg reports a credential name, whole or by the last word of a
// camelCase name.
func credentialArg(name string) bool {
	i := strings.LastIndexFunc(name, func(c rune) bool { return 'A' <= c && c <= 'Z' })
	return names(name, credentialGroup) || i > 0 && names(name[i:], credentialGroup)
}

// addCredentialValue registers v without a scheme word before it ("Bearer
// x", "token x") when it reads as a key.
func (r *Redactor) addCredentialValue(v string) {
	v = strings.TrimSpace(v)
	if _, rest, ok := strings.Cut(v, " "); ok {
		v = strings.TrimSpace(rest)
	}
	if len(v) >= MinSessionIDLen && keyLike(v) {
		r.AddSecret(v)
	}
}

func longestFirst(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) }

// formsOf returns s and the forms it takes escaped by Go's %q, in a JSON
// string and in a URL query or path, longest first.
func formsOf(s string) []string {
	q := strconv.Quote(s)
	j, _ := json.Marshal(s)
	forms := []string{s, q[1 : len(q)-1], string(j[1 : len(j)-1]), url.QueryEscape(s), url.PathEscape(s)}
	slices.SortFunc(forms, longestFirst)
	return slices.Compact(forms)
}

// Text redacts s by the rules of [Redactor], rerun until s no longer
// changes (one rule's mask can make another's match; at most 8 runs).
func (r *Redactor) Text(s string) string {
	if r != nil {
		r.mu.RLock()
		defer r.mu.RUnlock()
	}
	for range 8 {
		out := s
		if r != nil {
			out = r.hashIDs(r.maskSecrets(out))
		}
		if out = redactPatterns(out, r); out == s {
			break
		}
		s = out
	}
	return s
}

// MaskSecrets masks only the registered secrets in s: for a tool's name the
// patterns would rewrite ("auth:login"). A nil Redactor masks nothing.
func (r *Redactor) MaskSecrets(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.maskSecrets(s)
}

// cutMark marks where a cut text left off: a secret's piece may stand there.
var cutMark = regexp.MustCompile(`\.\.\.|…`)

// maskSecrets masks every form of every secret, then the pieces of 6 bytes
// or more at a cut. Called with mu read-held.
func (r *Redactor) maskSecrets(s string) string {
	if len(r.masks) == 0 {
		return s // no secret, no cut pieces to look for
	}
	for _, k := range r.masks {
		s = strings.ReplaceAll(s, k, Masked)
	}
	var b strings.Builder
	last := 0
	for _, m := range append(cutMark.FindAllStringIndex(s, -1), []int{len(s), len(s)}) {
		b.WriteString(r.maskPieceEnds(s[last:m[0]]))
		b.WriteString(s[m[0]:m[1]])
		last = m[1]
	}
	return b.String()
}

// maskPieceEnds masks the longest start of a secret that ends piece and the
// longest end of one that begins it, each of at least 6 bytes.
func (r *Redactor) maskPieceEnds(piece string) string {
	const least = 6
	for _, k := range r.masks {
		for i := max(0, len(piece)-len(k)+1); i <= len(piece)-least; i++ {
			if strings.HasPrefix(k, piece[i:]) {
				piece = piece[:i] + Masked
				break
			}
		}
		for j := max(1, len(k)-len(piece)); j <= len(k)-least; j++ {
			if strings.HasPrefix(piece, k[j:]) {
				piece = Masked + piece[len(k)-j:]
				break
			}
		}
	}
	return piece
}

// hashIDs hashes every registered id of at least MinSessionIDLen bytes
// that stands as a whole token. Called with mu read-held.
func (r *Redactor) hashIDs(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if i < last || i > 0 && isWord(s[i]) && isWord(s[i-1]) {
			continue
		}
		if f, ok := r.idAt(s, i, MinSessionIDLen); ok {
			b.WriteString(s[last:i])
			last = writeHash(&b, s, i, i+len(f.form), f.hash)
		}
	}
	return b.String() + s[last:]
}

// idAt returns the longest registered form of at least least bytes that
// starts at s[i] and is not continued by a letter or digit.
func (r *Redactor) idAt(s string, i, least int) (idForm, bool) {
	if r != nil {
		for _, f := range r.ids {
			end := i + len(f.form)
			if len(f.form) >= least && strings.HasPrefix(s[i:], f.form) && (end == len(s) || !isWord(s[end]) || !isWord(s[end-1])) {
				return f, true
			}
		}
	}
	return idForm{}, false
}

// writeHash writes h in place of s[i:end] and returns end, spaced from a
// letter or digit it touches (the next pass would read one longer token).
func writeHash(b *strings.Builder, s string, i, end int, h string) int {
	if i > 0 && isWord(s[i-1]) && isWord(h[0]) {
		b.WriteByte(' ')
	}
	b.WriteString(h)
	if end < len(s) && isWord(s[end]) && isWord(h[len(h)-1]) {
		b.WriteByte(' ')
	}
	return end
}

func isWord(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Redact returns e with its free text (Server, Name, Detail, ContentType,
// changed names, warnings, verdicts' Detail and RPC.Message) redacted and
// SessionID hashed; the vocabulary is never rewritten, e not modified.
func (r *Redactor) Redact(e Event) Event {
	e.Server, e.Name, e.Detail, e.ContentType = r.Text(e.Server), r.Text(e.Name), r.Text(e.Detail), r.Text(e.ContentType)
	e.Verdict, e.SessionID = r.Verdict(e.Verdict), hashUnlessHashed(e.SessionID)
	e.Added, e.Removed, e.Changed = r.texts(e.Added), r.texts(e.Removed), r.texts(e.Changed)
	e.Prompts, e.Resources, e.ResourceTemplates = r.change(e.Prompts), r.change(e.Resources), r.change(e.ResourceTemplates)
	if e.Lists != nil {
		e.Lists = slices.Clone(e.Lists)
		for i, l := range e.Lists {
			e.Lists[i].Verdict, e.Lists[i].Warning = r.Verdict(l.Verdict), r.Text(l.Warning)
		}
	}
	return e
}

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
	out := slices.Clone(in) // nil stays nil
	for i, s := range out {
		out[i] = r.Text(s)
	}
	return out
}

package events

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/mcpsup/mcpsup/classify"
)

// Masked replaces a secret in redacted text.
const Masked = "[redacted]"

// HashSessionID returns the short stable form of an MCP session id
// (Mcp-Session-Id) used in events and logs: "sid:" and the first 8 hex digits
// of the id's SHA-256, e.g. "sid:2c26b46b". The same id always gives the same
// hash, so a person can follow one session across events without seeing it.
func HashSessionID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "sid:" + hex.EncodeToString(sum[:4])
}

var (
	hashedID = regexp.MustCompile(`^sid:[0-9a-f]{8}$`)
	// go-sdk's streamable client prints "(session ID: <id>)" in the errors
	// of a failed standalone stream or reconnect (mcp/streamable.go). The id
	// is visible ASCII (MCP transports, session management); it ends at a
	// ")" that closes the parenthesis, at a space, quote, comma or "]", or at
	// the end. Header renderings ("Mcp-Session-Id: x", Go's map[...:[x]],
	// JSON) match too.
	sdkSessionID = regexp.MustCompile(`(?i)(session[ _-]?id"?\s*[:=]\s*\[?"?)([!-'*-Z\\-~][!-~]*?)(\)(?:[:\s,]|$)|[\s",\]]|$)`)
	// A header in any usual rendering: "Authorization: x", Go's
	// "map[Authorization:[x]]", JSON `"Authorization":"x"`. The value is
	// masked up to a quote, a closing bracket or the end of the line.
	secretHeader = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization|(?:set-)?cookie|x-api-key|api-key)("?\s*[:=]\s*\[?"?)([^"\[\]\r\n][^"\]\r\n]*)`)
	bearer       = regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]+=*`)
	queryToken   = regexp.MustCompile(`(?i)\b((?:access_|refresh_|id_)?token|api_?key)=([^&\s"]+)`)
)

// Redactor rewrites events so that no credential and no raw session id
// reaches a sink:
//
//   - every session id registered with [Redactor.AddSessionID] is replaced,
//     wherever it appears in a string field, by [HashSessionID] of it;
//   - every secret registered with [Redactor.AddSecret] (a token, a cookie
//     value) is replaced by [Masked];
//   - by pattern, also for values never registered: go-sdk's
//     "session ID: <id>" error text is hashed, "Bearer <token>" and the
//     values of Authorization, Proxy-Authorization, Cookie, Set-Cookie,
//     X-Api-Key and Api-Key headers are masked, and token-like URL query
//     parameters (token, access_token, api_key, ...) are masked;
//   - [Event.SessionID] is always a hash: a value that is not already of
//     the form "sid:<8 hex>" is hashed.
//
// The patterns change only text for people; no decision rests on event text.
// The zero value is ready to use (patterns only); a Redactor is safe for
// concurrent use and must not be copied after first use.
type Redactor struct {
	mu      sync.RWMutex
	secrets map[string]string // secret -> replacement
	ordered []string          // keys of secrets, longest first
}

// AddSessionID registers a session id to hash wherever it appears. Empty ids
// are ignored.
func (r *Redactor) AddSessionID(id string) { r.add(id, HashSessionID(id)) }

// AddSecret registers a credential (a token, a cookie or header value) to
// mask wherever it appears. Empty values are ignored.
func (r *Redactor) AddSecret(s string) { r.add(s, Masked) }

// Forget unregisters a session id or secret, e.g. when a session has ended
// for good, so that the Redactor does not grow without bound.
func (r *Redactor) Forget(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.secrets[s]; !ok {
		return
	}
	delete(r.secrets, s)
	r.order()
}

func (r *Redactor) add(s, repl string) {
	if s == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.secrets == nil {
		r.secrets = map[string]string{}
	}
	if old, ok := r.secrets[s]; ok && old == Masked {
		return // a secret stays masked even if also registered as a session id
	}
	r.secrets[s] = repl
	r.order()
}

// order sorts the keys longest first, so that a secret containing another is
// replaced whole. Called with mu held.
func (r *Redactor) order() {
	r.ordered = r.ordered[:0]
	for k := range r.secrets {
		r.ordered = append(r.ordered, k)
	}
	sort.Slice(r.ordered, func(i, j int) bool {
		if len(r.ordered[i]) != len(r.ordered[j]) {
			return len(r.ordered[i]) > len(r.ordered[j])
		}
		return r.ordered[i] < r.ordered[j]
	})
}

// Text redacts one string by the rules of [Redactor]. It is idempotent.
func (r *Redactor) Text(s string) string {
	if s == "" {
		return s
	}
	if r != nil {
		r.mu.RLock()
		for _, k := range r.ordered {
			if strings.Contains(s, k) {
				s = strings.ReplaceAll(s, k, r.secrets[k])
			}
		}
		r.mu.RUnlock()
	}
	s = secretHeader.ReplaceAllStringFunc(s, func(m string) string {
		sub := secretHeader.FindStringSubmatch(m)
		if sub[3] == Masked || (sub[3] == "redacted" && strings.HasSuffix(sub[2], "[")) {
			return m // already masked
		}
		return sub[1] + sub[2] + Masked
	})
	s = bearer.ReplaceAllString(s, "${1} "+Masked)
	s = queryToken.ReplaceAllString(s, "${1}="+Masked)
	return sdkSessionID.ReplaceAllStringFunc(s, func(m string) string {
		sub := sdkSessionID.FindStringSubmatch(m)
		id := sub[2]
		if hashedID.MatchString(id) || id == Masked {
			return m
		}
		return sub[1] + HashSessionID(id) + sub[3]
	})
}

// Redact returns a copy of e with every string field redacted by the rules
// of [Redactor]; e and its slices are not modified. It is idempotent. A nil
// *Redactor applies the patterns only.
func (r *Redactor) Redact(e Event) Event {
	e.Kind, e.Server = Kind(r.Text(string(e.Kind))), r.Text(e.Server)
	e.From, e.To, e.Trigger, e.Guard = State(r.Text(string(e.From))), State(r.Text(string(e.To))), Trigger(r.Text(string(e.Trigger))), r.Text(e.Guard)
	e.Reason, e.Op, e.Name, e.Delivery = Reason(r.Text(string(e.Reason))), r.Text(e.Op), r.Text(e.Name), r.Text(e.Delivery)
	e.Detail = r.Text(e.Detail)
	e.Verdict = r.verdict(e.Verdict)
	if e.SessionID != "" && !hashedID.MatchString(e.SessionID) {
		e.SessionID = HashSessionID(e.SessionID)
	}
	e.Added, e.Removed, e.Changed = r.texts(e.Added), r.texts(e.Removed), r.texts(e.Changed)
	if e.Lists != nil {
		lists := make([]ListOutcome, len(e.Lists))
		for i, l := range e.Lists {
			lists[i] = ListOutcome{List: r.Text(l.List), Status: r.Text(l.Status), Items: l.Items,
				Verdict: r.verdict(l.Verdict), Warning: r.Text(l.Warning)}
		}
		e.Lists = lists
	}
	return e
}

func (r *Redactor) verdict(v classify.Verdict) classify.Verdict {
	v.Method, v.Detail, v.RPC.Message = r.Text(v.Method), r.Text(v.Detail), r.Text(v.RPC.Message)
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

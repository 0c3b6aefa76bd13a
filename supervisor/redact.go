package supervisor

import (
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mcpsup/mcpsup/events"
)

// redactor keeps session ids and credentials out of every text the
// supervisor hands out: events, errors, log records and String. It holds the
// ids of the sessions in use (held sessions and the resume state's) and
// forgets the others, so its cost never grows with the sessions of the past;
// a forgotten id is still hashed where go-sdk names it.
type redactor struct {
	events.Redactor
	ids []string // ids registered by keepSessionIDs (one or two); loop goroutine

	credMu sync.Mutex
	creds  []string // the OAuth access tokens registered, the last maxCredentials
}

// maxCredentials is how many of the OAuth handler's access tokens, the
// last ones, stay registered: a renewed token's predecessor may still be
// quoted by an answer under way.
const maxCredentials = 2

// addCredential registers an access token the OAuth handler gave a request
// (wire.Config.OnCredential) as a secret: a server may quote it in an
// answer's text (a JSON-RPC error message, a 401 body) without a credential
// word the patterns know, and it reached the call's error, its verdict and
// the call-failed event. The oldest beyond maxCredentials is forgotten, so
// the tokens of a long life do not pile up.
func (r *redactor) addCredential(tok string) {
	r.credMu.Lock()
	defer r.credMu.Unlock()
	if slices.Contains(r.creds, tok) {
		return
	}
	r.AddLikelySecret(tok)
	r.creds = append(r.creds, tok)
	if len(r.creds) > maxCredentials {
		r.ForgetSecret(r.creds[0])
		r.creds = slices.Delete(r.creds, 0, 1)
	}
}

// redactLogs wraps Config.Logger and go-sdk's ClientOptions.Logger (which
// logs keepalive failures with go-sdk's error text) in the redacting
// handler, once, before anything logs.
func (s *Supervisor) redactLogs() {
	s.cfg.Logger = slog.New(events.RedactingHandler(&s.redact.Redactor, s.cfg.Logger.Handler()))
	if l := s.cfg.ClientOptions.Logger; l != nil {
		s.cfg.ClientOptions.Logger = slog.New(events.RedactingHandler(&s.redact.Redactor, l.Handler()))
	}
}

// minPathSecret is the shortest segment of the endpoint's path taken for
// a credential: a "secret URL" server carries its key there (/s/<key>/mcp),
// which the patterns cannot tell from a word; a key is long, and a shorter
// segment ("mcp", "servers", "v1") is a word that masking would take out of
// every text.
const minPathSecret = 16

// addEndpointSecrets registers what Config.Endpoint may carry as a
// credential beyond what the patterns find by name: the userinfo, every
// path segment of at least minPathSecret bytes, and every query value,
// whatever its parameter is called (?accessToken=, ?code=,
// ?k=: the patterns know only names with a credential word as a part split
// at '-', '_' and '.'). A value shorter than events.MinSessionIDLen bytes is
// not registered (events.Redactor.AddLikelySecret). The query is split by hand, so
// that a value url.ParseQuery would drop (a bad escape), or an endpoint
// url.Parse refuses, still has its values registered as written.
func (r *redactor) addEndpointSecrets(endpoint string) {
	add := r.AddLikelySecret
	beforeFragment, _, _ := strings.Cut(endpoint, "#")
	beforeQuery, _, _ := strings.Cut(beforeFragment, "?")
	if _, rest, ok := strings.Cut(beforeQuery, "://"); ok {
		if _, path, ok := strings.Cut(rest, "/"); ok {
			for seg := range strings.SplitSeq(path, "/") {
				if len(seg) >= minPathSecret {
					r.AddSecret(seg)
					if plain, err := url.PathUnescape(seg); err == nil && plain != seg {
						r.AddSecret(plain)
					}
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

// addCommandSecrets registers the values of a stdio server's Command.Env
// as secrets (events.Redactor.AddLikelySecret): they are the process's
// credentials, typically, and a server that prints one on stderr or stdout
// had it logged, quoted in a stdout-line-dropped event and in its exit's
// stderr tail. The hub does the same for a server's env values.
func (r *redactor) addCommandSecrets(cmd *Command) {
	if cmd == nil {
		return
	}
	for _, kv := range cmd.Env {
		_, v, _ := strings.Cut(kv, "=")
		r.AddLikelySecret(v)
	}
}

// keepSessionIDs registers the ids of the sessions in use, the held ones and
// the resume state's, and forgets every other id it registered. Loop
// goroutine only.
func (s *Supervisor) keepSessionIDs() {
	// One or two sessions and the resume state's: a small array, not a
	// map, as this runs after every step.
	var buf [3]string
	want := buf[:0]
	keep := func(id string) {
		if id != "" && !slices.Contains(want, id) {
			want = append(want, id)
		}
	}
	for _, h := range s.loop.sessions {
		keep(h.sess.ID())
	}
	s.mu.Lock()
	if rs := s.snap.resume; rs != nil {
		keep(rs.SessionID)
	}
	s.mu.Unlock()
	s.redact.ids = slices.DeleteFunc(s.redact.ids, func(id string) bool {
		if slices.Contains(want, id) {
			return false
		}
		s.redact.ForgetSessionID(id)
		return true
	})
	for _, id := range want {
		if !slices.Contains(s.redact.ids, id) {
			s.redact.AddSessionID(id)
			s.redact.ids = append(s.redact.ids, id)
		}
	}
}

// redactedError is an error whose text is redacted and whose chain is the
// original's, for errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// endpointText redacts text made before a supervisor exists (Config and
// resume state validation): by the patterns, and the credentials of the
// endpoints it names (addEndpointSecrets).
func endpointText(s string, endpoints ...string) string {
	var r redactor
	for _, ep := range endpoints {
		r.addEndpointSecrets(ep)
	}
	return r.Text(s)
}

package supervisor

import (
	"slices"
	"sync"

	"github.com/mcpsup/mcpsup/events"
)

// redactor keeps session ids and credentials out of every text the
// supervisor hands out. It holds the ids of the sessions in use only
// (keepSessionIDs); a forgotten id is still hashed where go-sdk names it.
type redactor struct {
	events.Redactor

	credMu sync.Mutex
	creds  []string // the last maxCredentials OAuth access tokens
}

// maxCredentials is how many of the OAuth handler's access tokens, the
// last ones, stay registered: a renewed token's predecessor may still be
// quoted by an answer under way.
const maxCredentials = 2

// addCredential registers an access token the OAuth handler gave a request
// (httpsession.Config.OnCredential): a server may quote it.
func (r *redactor) addCredential(tok string) {
	r.credMu.Lock()
	defer r.credMu.Unlock()
	if slices.Contains(r.creds, tok) || !r.AddLikelySecret(tok) {
		return // registered already, or too short to register
	}
	r.creds = append(r.creds, tok)
	if len(r.creds) > maxCredentials {
		r.ForgetSecret(r.creds[0])
		r.creds = slices.Delete(r.creds, 0, 1)
	}
}

// keepSessionIDs keeps registered the held sessions' and the resume
// state's ids, and no other. Loop goroutine.
func (s *Supervisor) keepSessionIDs() {
	var ids []string
	for _, h := range s.loop.sessions {
		ids = append(ids, h.sess.Info().ID)
	}
	if rs := read(s, func(sn *snapshot) *ResumeState { return sn.resume }); rs != nil {
		ids = append(ids, rs.SessionID)
	}
	s.redact.KeepSessionIDs(ids...)
}

// endpointText redacts text made before a supervisor exists, masking the
// endpoints' credentials.
func endpointText(s string, endpoints ...string) string {
	var r redactor
	for _, ep := range endpoints {
		r.AddEndpointSecrets(ep)
	}
	return r.Text(s)
}

package hub

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sync"

	"github.com/mcpsup/mcpsup/msgcheck"
)

// headerVar is a reference to an environment variable in a header value:
// ${NAME}, or VS Code's ${env:NAME}.
var headerVar = regexp.MustCompile(`\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandHeaders returns headers with every ${NAME} (or ${env:NAME})
// replaced by lookup's value, and the values taken; an unset variable is an
// error wrapping ErrUnsetVariable naming it.
func expandHeaders(headers map[string]string, lookup func(string) (string, bool)) (map[string]string, []string, error) {
	if len(headers) == 0 {
		return nil, nil, nil
	}
	out := make(map[string]string, len(headers))
	var took []string
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		var unset string
		out[k] = headerVar.ReplaceAllStringFunc(headers[k], func(ref string) string {
			name := headerVar.FindStringSubmatch(ref)[1]
			v, ok := lookup(name)
			if !ok && unset == "" {
				unset = name
			}
			took = append(took, v)
			return v
		})
		if unset != "" {
			return nil, nil, fmt.Errorf("%w: header %q names ${%s}", ErrUnsetVariable, msgcheck.CutText(k, 64), unset)
		}
	}
	return out, took, nil
}

// credentialVars are the variables the servers' headers reference, which
// no stdio server inherits, for the hub's life. Safe for concurrent use.
type credentialVars struct{ names sync.Map } // name -> struct{}

// note takes the variables sc's headers reference for credentials.
func (v *credentialVars) note(sc ServerConfig) {
	for _, value := range sc.Headers {
		for _, m := range headerVar.FindAllStringSubmatch(value, -1) {
			v.names.Store(m[1], struct{}{})
		}
	}
}

// inherit is a stdio server's stdio.Command.Inherit: no variable a
// server's headers reference, and what the host's filter, if any, keeps.
func (v *credentialVars) inherit(host func(string) bool) func(string) bool {
	return func(name string) bool {
		_, credential := v.names.Load(name)
		return !credential && (host == nil || host(name))
	}
}

// serverClient returns a copy of c (nil: a client on
// http.DefaultTransport) that sets headers on every request and, with a
// gate, sends none once the gate's hold ended.
func serverClient(c *http.Client, headers map[string]string, gate *holdGate) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	t := &serverTransport{base: cp.Transport, headers: make(http.Header, len(headers)), gate: gate}
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	for k, v := range headers {
		t.headers.Set(k, v)
	}
	cp.Transport = t
	return &cp
}

type serverTransport struct {
	base    http.RoundTripper
	headers http.Header
	gate    *holdGate // nil: no lease
}

func (t *serverTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.gate.check(); err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // a RoundTripper closes what it does not send
		}
		return nil, err
	}
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range t.headers {
			req.Header[k] = vs
		}
	}
	return t.base.RoundTrip(req)
}

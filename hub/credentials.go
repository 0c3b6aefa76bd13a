package hub

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sync"
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
			return nil, nil, fmt.Errorf("%w: header %q names ${%s}", ErrUnsetVariable, cutText(k, 64), unset)
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

// headerTransport sets the server's headers on every request.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, vs := range t.headers {
		r.Header[k] = vs
	}
	return t.base.RoundTrip(r)
}

func withHeaders(c *http.Client, headers map[string]string) *http.Client {
	hs := make(http.Header, len(headers))
	for k, v := range headers {
		hs.Set(k, v)
	}
	return wrapClient(c, func(base http.RoundTripper) http.RoundTripper { return &headerTransport{base: base, headers: hs} })
}

// wrapClient returns a copy of c (nil: a client on http.DefaultTransport)
// whose transport is wrap of c's.
func wrapClient(c *http.Client, wrap func(base http.RoundTripper) http.RoundTripper) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	if cp.Transport == nil {
		cp.Transport = http.DefaultTransport
	}
	cp.Transport = wrap(cp.Transport)
	return &cp
}

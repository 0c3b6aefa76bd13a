package hub

import "net/http"

// headerTransport adds the configured headers to every request.
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

// withHeaders returns a copy of c whose transport sets headers on every
// request.
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

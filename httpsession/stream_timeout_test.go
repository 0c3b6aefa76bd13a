package httpsession_test

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
)

// deadlines records, per verb, whether each request reached the host's
// transport with a deadline on its context.
type deadlines struct {
	mu   sync.Mutex
	seen map[string][]bool
}

func (d *deadlines) RoundTrip(req *http.Request) (*http.Response, error) {
	_, has := req.Context().Deadline()
	d.mu.Lock()
	if d.seen == nil {
		d.seen = map[string][]bool{}
	}
	d.seen[req.Method] = append(d.seen[req.Method], has)
	d.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (d *deadlines) of(verb string) []bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]bool(nil), d.seen[verb]...)
}

// TestHostTimeoutNeverBoundsTheStream: a host HTTPClient.Timeout bounds
// every POST (and the DELETE) but never the standalone stream's GET, which
// http.Client would cut once the Timeout passed, however healthy the idle
// stream; the keeper's GET carries the host client's cookies.
func TestHostTimeoutNeverBoundsTheStream(t *testing.T) {
	g, url := newServer(t, nil)
	var cookies []string
	var mu sync.Mutex
	arrived := make(chan struct{}, 1)
	faultGETs(g, func(w http.ResponseWriter, r *http.Request, n int) bool {
		mu.Lock()
		cookies = append(cookies, r.Header.Get("Cookie"))
		mu.Unlock()
		arrived <- struct{}{}
		return false // the server's own stream: idle, open
	})
	base := &deadlines{}
	jar := &oneCookieJar{c: &http.Cookie{Name: "affinity", Value: "a1"}}
	hc := &http.Client{Transport: base, Timeout: time.Second, Jar: jar}
	s := open(t, url, httpsession.Options{HTTPClient: hc})
	within(t, arrived, "the keeper's GET at the server")
	callEcho(t, s.ClientSession())
	require.NoError(t, s.Close())

	assert.Equal(t, []bool{false}, base.of(http.MethodGet), "the stream's GET has no deadline")
	posts := base.of(http.MethodPost)
	require.NotEmpty(t, posts)
	for _, has := range posts {
		assert.True(t, has, "every POST is bounded by the host's Timeout")
	}
	assert.Equal(t, []bool{true}, base.of(http.MethodDelete))
	assert.Equal(t, 1, g.count("GET", ""), "one GET: the stream was never cut")
	mu.Lock()
	assert.Equal(t, []string{"affinity=a1"}, cookies)
	mu.Unlock()
}

// oneCookieJar returns one cookie for every URL.
type oneCookieJar struct{ c *http.Cookie }

func (j *oneCookieJar) SetCookies(*url.URL, []*http.Cookie) {}
func (j *oneCookieJar) Cookies(*url.URL) []*http.Cookie     { return []*http.Cookie{j.c} }

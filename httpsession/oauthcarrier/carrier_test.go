package oauthcarrier_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession/oauthcarrier"
)

// handler is an auth.OAuthHandler whose Authorize renews the token to next.
type handler struct {
	mu         sync.Mutex
	token      string
	next       string
	authorized atomic.Int32
	source     error  // TokenSource fails with it when set
	token2     error  // Token fails with it when set
	authorize  func() // runs inside Authorize when set
}

func (h *handler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if h.source != nil {
		return nil, h.source
	}
	return h, nil
}

func (h *handler) Token() (*oauth2.Token, error) {
	if h.token2 != nil {
		return nil, h.token2
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return &oauth2.Token{AccessToken: h.token}, nil
}

func (h *handler) Authorize(context.Context, *http.Request, *http.Response) error {
	if h.authorize != nil {
		h.authorize()
	}
	h.authorized.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.token = h.next
	return nil
}

// roundTripper answers each request with f.
type roundTripper func(*http.Request) *http.Response

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r), nil }

func answer(r *http.Request, status int) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}
}

// server accepts the Bearer token good and refuses any other with 401.
func server(good string, sent *[]string, mu *sync.Mutex) roundTripper {
	return func(r *http.Request) *http.Response {
		auth := r.Header.Get("Authorization")
		mu.Lock()
		*sent = append(*sent, auth)
		mu.Unlock()
		if auth != "Bearer "+good {
			return answer(r, http.StatusUnauthorized)
		}
		return answer(r, http.StatusOK)
	}
}

func post(t *testing.T, tr http.RoundTripper) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader("{}"))
	require.NoError(t, err)
	return tr.RoundTrip(req)
}

// A 401 runs Authorize once and sends the request again with the renewed
// token (MCP authorization.mdx; RFC 6750 section 3.1).
func TestRefusedCredentialIsAuthorizedAndSentAgain(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	h := &handler{token: "t1", next: "t2"}
	var told []string
	tr := &oauthcarrier.Transport{Base: server("t2", &sent, &mu), Handler: h,
		OnCredential: func(tok string) { told = append(told, tok) }}
	resp, err := post(t, tr)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []string{"Bearer t1", "Bearer t2"}, sent)
	assert.Equal(t, int32(1), h.authorized.Load())
	assert.Equal(t, []string{"t1", "t2"}, told, "each credential told once")
	select {
	case <-tr.Accepted():
	default:
		t.Fatal("a 2xx after the refusal accepts the credential")
	}
}

// Requests refused with one credential run one Authorize between them
// (single-flight per credential generation), and all succeed.
func TestConcurrentRefusalsAuthorizeOnce(t *testing.T) {
	const n = 8
	var mu sync.Mutex
	var sent []string
	var closed atomic.Int32
	allRefused := make(chan struct{})
	good := server("t2", &sent, &mu)
	base := roundTripper(func(r *http.Request) *http.Response {
		resp := good(r)
		if resp.StatusCode == http.StatusUnauthorized {
			resp.Body = &onClose{ReadCloser: resp.Body, f: func() {
				if closed.Add(1) == n {
					close(allRefused)
				}
			}}
		}
		return resp
	})
	// Authorize ends once every request has read its refusal: none can
	// find the credential renewed before it asks for an Authorize.
	h := &handler{token: "t1", next: "t2", authorize: func() { <-allRefused }}
	tr := &oauthcarrier.Transport{Base: base, Handler: h}
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Go(func() {
			resp, err := post(t, tr)
			if assert.NoError(t, err) {
				statuses[i] = resp.StatusCode
			}
		})
	}
	wg.Wait()
	for _, s := range statuses {
		assert.Equal(t, http.StatusOK, s)
	}
	assert.Equal(t, int32(1), h.authorized.Load(), "one Authorize for one refused credential")
}

// onClose runs f when the body is closed.
type onClose struct {
	io.ReadCloser
	f func()
}

func (b *onClose) Close() error {
	b.f()
	return b.ReadCloser.Close()
}

// A failing token source fails the request with classify.ErrCredential;
// invalid_grant (RFC 6749 section 5.2) is sent without a token instead, for
// the server's 401 to start Authorize; a panic is the request's error.
func TestTokenSourceFailures(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	h := &handler{source: errors.New("no credential")}
	_, err := post(t, &oauthcarrier.Transport{Base: server("t2", &sent, &mu), Handler: h})
	require.ErrorIs(t, err, classify.ErrCredential)
	assert.Empty(t, sent, "nothing sent")

	h = &handler{token2: &oauth2.RetrieveError{ErrorCode: "invalid_grant"}, next: "t2"}
	h.authorize = func() { h.token2 = nil }
	resp, err := post(t, &oauthcarrier.Transport{Base: server("t2", &sent, &mu), Handler: h})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []string{"", "Bearer t2"}, sent, "sent without a token, then authorized")

	h = &handler{token: "t1", next: "t2", authorize: func() { panic("boom") }}
	resp, err = post(t, &oauthcarrier.Transport{Base: server("t2", &sent, &mu), Handler: h})
	require.NoError(t, err, "a failed Authorize hands on the refused answer")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// Accepted closes only for a 2xx to a request sent after the last refusal:
// a 2xx to one sent before says nothing of the credential now.
func TestAcceptedWaitsForA2xxSentAfterTheRefusal(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{})
	base := roundTripper(func(r *http.Request) *http.Response {
		switch r.Header.Get("X-Test") {
		case "early":
			close(arrived)
			<-release
			return answer(r, http.StatusOK)
		case "refused":
			return answer(r, http.StatusUnauthorized)
		}
		return answer(r, http.StatusOK)
	})
	tr := &oauthcarrier.Transport{Base: base}
	send := func(kind string) int {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://127.0.0.1/mcp", nil)
		require.NoError(t, err)
		req.Header.Set("X-Test", kind)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		return resp.StatusCode
	}
	closed := func() bool {
		select {
		case <-tr.Accepted():
			return true
		default:
			return false
		}
	}
	require.True(t, closed(), "accepted until refused")
	early := make(chan int)
	go func() { early <- send("early") }()
	<-arrived
	assert.Equal(t, http.StatusUnauthorized, send("refused"))
	assert.False(t, closed(), "refused")
	close(release)
	assert.Equal(t, http.StatusOK, <-early)
	assert.False(t, closed(), "a 2xx to a request sent before the refusal")
	assert.Equal(t, http.StatusOK, send("later"))
	assert.True(t, closed(), "a 2xx to a request sent after it")
}

// A 403 whose insufficient_scope challenge stands in a second
// WWW-Authenticate field line refuses the credential (RFC 9110 sections
// 5.3 and 11.6.1; MCP 2025-11-25 basic/authorization, Runtime Insufficient
// Scope Errors); a 403 without one does not.
func TestRefusedReadsEveryChallengeLine(t *testing.T) {
	resp := &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{}}
	resp.Header.Add("WWW-Authenticate", `Basic realm="legacy"`)
	assert.False(t, oauthcarrier.Refused(resp), "a policy 403")
	resp.Header.Add("WWW-Authenticate", `Bearer error="insufficient_scope", scope="files:write"`)
	assert.True(t, oauthcarrier.Refused(resp))
}

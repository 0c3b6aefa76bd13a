package httpsession_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
)

// open2026 opens a 2026-07-28 session on a stateless go-sdk server.
func open2026(t *testing.T, url string, opts httpsession.Options) (*httpsession.Session, error) {
	t.Helper()
	opts.Endpoint, opts.Era = url, httpsession.Era20260728
	s, err := httpsession.Open(context.Background(), opts)
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

// Session.Discover is the 2026-07-28 keepalive: one server/discover on the
// wire, answered with a result; a refusal comes back as the server's
// JSON-RPC error with its HTTP facts.
func TestSessionDiscover(t *testing.T) {
	g, url := newServer(t, &mcp.StreamableHTTPOptions{Stateless: true})
	s, err := open2026(t, url, httpsession.Options{})
	require.NoError(t, err)
	require.Equal(t, "2026-07-28", s.ProtocolVersion())
	before := g.count("POST", "server/discover")
	require.NoError(t, s.Discover(context.Background()))
	require.Equal(t, before+1, g.count("POST", "server/discover"))

	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "server/discover" {
			return false
		}
		writeFault(w, http.StatusBadRequest, "application/json",
			`{"jsonrpc":"2.0","id":"mcpsup-discover-2","error":{"code":-32022,"message":"unsupported protocol version"}}`, nil)
		return true
	})
	ctx := httpsession.WithExchange(context.Background())
	err = httpsession.Annotate(ctx, s.Discover(ctx))
	var rpc *jsonrpc.Error
	require.ErrorAs(t, err, &rpc)
	require.Equal(t, int64(httpsession.CodeUnsupportedProtocolVersion), rpc.Code)
	x, ok := httpsession.LastExchange(ctx)
	require.True(t, ok)
	require.True(t, httpsession.EraRefusal(x), "%+v", x)
	require.Equal(t, classify.Application, classify.Classify(context.Background(), err).Class)
}

// go-sdk falls back to initialize on any discover error; after an outage
// (a 502, a reset) the Transport fails that fallback, so the handshake
// fails as a whole instead of settling for 2025. With FallbackAfterOutage,
// or after a refusal, go-sdk falls back as usual.
func TestDiscoverOutageRefusesTheFallback(t *testing.T) {
	g, url := newServer(t, &mcp.StreamableHTTPOptions{Stateless: true})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "server/discover" {
			return false
		}
		writeFault(w, http.StatusBadGateway, "text/plain", "Bad Gateway", nil)
		return true
	})
	_, err := open2026(t, url, httpsession.Options{})
	require.ErrorIs(t, err, httpsession.ErrDiscoverOutage)
	var de *httpsession.DiscoverOutageError
	require.ErrorAs(t, err, &de)
	require.Equal(t, http.StatusBadGateway, de.Discover.Status)
	require.Zero(t, g.count("POST", "initialize"), "no fallback on the wire")

	s, err := open2026(t, url, httpsession.Options{Wire: httpsession.Config{FallbackAfterOutage: true}})
	require.NoError(t, err)
	require.Equal(t, "2025-11-25", s.ProtocolVersion(), "let through: go-sdk fell back")
	d, ok := httpsession.DiscoverExchange(s)
	require.True(t, ok)
	require.True(t, httpsession.DiscoverOutage(d))
}

// A discover that got no HTTP answer at all (nothing listens on the port)
// fails the handshake with an error that says why, in the dial's own words.
func TestDiscoverOutageNamesTheTransportError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String() + "/mcp"
	require.NoError(t, ln.Close())
	_, err = open2026(t, url, httpsession.Options{})
	var de *httpsession.DiscoverOutageError
	require.ErrorAs(t, err, &de)
	require.Error(t, de.Discover.TransportErr)
	require.Contains(t, de.Error(), de.Discover.TransportErr.Error())
	require.Contains(t, err.Error(), de.Discover.TransportErr.Error(), "the handshake's error names the dial's")
}

// A refused discover (400 -32022) is a verdict on the era: go-sdk falls
// back, and the record says why.
func TestDiscoverRefusalFallsBack(t *testing.T) {
	g, url := newServer(t, &mcp.StreamableHTTPOptions{Stateless: true})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "server/discover" {
			return false
		}
		writeFault(w, http.StatusBadRequest, "application/json",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported protocol version"}}`, nil)
		return true
	})
	s, err := open2026(t, url, httpsession.Options{})
	require.NoError(t, err)
	require.Equal(t, "2025-11-25", s.ProtocolVersion())
	d, ok := httpsession.DiscoverExchange(s)
	require.True(t, ok)
	require.True(t, httpsession.EraRefusal(d), "%+v", d)
	require.False(t, httpsession.DiscoverOutage(d))
}

// listenDeadlines records, per listen POST that reaches it, whether its context
// had a deadline.
type listenDeadlines struct {
	base http.RoundTripper
	got  chan bool
}

func (d *listenDeadlines) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Mcp-Method") == "subscriptions/listen" {
		_, has := req.Context().Deadline()
		d.got <- has
	}
	return d.base.RoundTrip(req)
}

// The listen stream of a 2026-07-28 session is the keeper's: each time the
// server's stream ends it is re-sent on the backoff, each end is an
// attempt that failed at once, and the host's request timeout never bounds
// it.
func TestListenIsReSentWhenItEnds(t *testing.T) {
	g, url := newServer(t, &mcp.StreamableHTTPOptions{Stateless: true})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "subscriptions/listen" || n >= 2 {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK) // and end at once
		return true
	})
	attempted := make(chan httpsession.StreamAttempt, 8)
	dl := &listenDeadlines{base: http.DefaultTransport, got: make(chan bool, 8)}
	s, err := open2026(t, url, httpsession.Options{
		HTTPClient: &http.Client{Transport: dl, Timeout: time.Minute},
		Client: mcp.NewClient(&mcp.Implementation{Name: "t"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
		}),
		Wire: httpsession.Config{
			Stream:          httpsession.StreamConfig{InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond},
			OnStreamAttempt: func(a httpsession.StreamAttempt) { attempted <- a },
		},
	})
	require.NoError(t, err)
	for i := range 2 {
		a := <-attempted
		require.Equal(t, i+1, a.Seq)
		require.Equal(t, httpsession.EndEOF, a.End)
		require.True(t, a.FailedAtOnce(2*time.Second), "%+v", a)
	}
	require.Eventually(t, func() bool { return g.count("POST", "subscriptions/listen") == 3 }, 5*time.Second, time.Millisecond,
		"the listen is re-sent after each end")
	for range 3 {
		require.False(t, <-dl.got, "no listen POST carries the request timeout")
	}
	callEcho(t, s.ClientSession())
	require.Empty(t, attempted, "the third listen lives")
}

// A handshake whose discover met an outage fails with the discover's facts,
// not those of the fallback initialize refused unsent: a 429's status,
// Retry-After and method decide the verdict (so the retry waits for
// Retry-After, RFC 9110 section 10.2.3), and a discover held until the
// handshake's context ended is a timeout of server/discover, an outage as
// errors.Is tells, though go-sdk returns the context's error.
func TestDiscoverOutageErrorCarriesTheDiscoversFacts(t *testing.T) {
	g, url := newServer(t, &mcp.StreamableHTTPOptions{Stateless: true})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "server/discover" {
			return false
		}
		writeFault(w, http.StatusTooManyRequests, "text/plain", "slow down", map[string]string{"Retry-After": "3"})
		return true
	})
	_, err := open2026(t, url, httpsession.Options{})
	require.ErrorIs(t, err, httpsession.ErrDiscoverOutage)
	v := classify.Classify(context.Background(), err)
	require.Equal(t, classify.RateLimited, v.Class, "%v", v)
	require.Equal(t, http.StatusTooManyRequests, v.HTTPStatus)
	require.Equal(t, 3*time.Second, v.RetryAfter)
	require.Equal(t, "server/discover", v.Method)
	require.Zero(t, g.count("POST", "initialize"))

	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "server/discover" {
			return false
		}
		<-r.Context().Done() // held until the client gives up
		return true
	})
	ctx, cancel := context.WithTimeoutCause(context.Background(), 200*time.Millisecond, classify.ErrDeadline)
	defer cancel()
	_, err = httpsession.Open(ctx, httpsession.Options{Endpoint: url, Era: httpsession.Era20260728})
	require.ErrorIs(t, err, httpsession.ErrDiscoverOutage)
	v = classify.Classify(context.Background(), err)
	require.Equal(t, classify.Timeout, v.Class, "%v", v)
	require.Equal(t, "server/discover", v.Method)
	require.Zero(t, g.count("POST", "initialize"))
}

// A 400 to server/discover whose body breaks before its end cannot be
// inspected (streamable-http.mdx, Backward Compatibility: "On 400 Bad
// Request, the client SHOULD inspect the response body before falling
// back"): it is an outage, like a reset, and go-sdk's fallback initialize
// is refused, so a server that also speaks 2025 is not pinned to it.
func TestDiscoverRefusalWhoseBodyBrokeIsAnOutage(t *testing.T) {
	g, url := newServer(t, &mcp.StreamableHTTPOptions{Stateless: true})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "server/discover" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "300") // the connection closes short of it
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supp`))
		return true
	})
	_, err := open2026(t, url, httpsession.Options{})
	require.ErrorIs(t, err, httpsession.ErrDiscoverOutage)
	v := classify.Classify(context.Background(), err)
	require.Equal(t, http.StatusBadRequest, v.HTTPStatus, "%v", v)
	require.Equal(t, "server/discover", v.Method)
	require.Zero(t, g.count("POST", "initialize"), "no fallback on a body that could not be read")
}

package httpsession_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/session"
)

// facts collects what a dialer and its sessions observe.
type facts struct {
	mu  sync.Mutex
	all []session.Fact
}

func (f *facts) observe(x session.Fact) {
	f.mu.Lock()
	f.all = append(f.all, x)
	f.mu.Unlock()
}

func (f *facts) eraChanges() []session.EraChanged {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []session.EraChanged
	for _, x := range f.all {
		if e, ok := x.(session.EraChanged); ok {
			out = append(out, e)
		}
	}
	return out
}

// dial opens a session of d on spec, closed when the test ends.
func dial(t *testing.T, d *httpsession.Dialer, f *facts) session.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := d.Dial(ctx, session.Spec{Generation: 1, Observe: f.observe})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// ended waits for s's end and returns its cause.
func ended(t *testing.T, s session.Session) error {
	t.Helper()
	within(t, s.Done(), "the session's end")
	st, next := s.Status()
	require.Equal(t, session.Ended, st)
	require.Nil(t, next, "Ended is final: no change to wait for")
	return s.Err()
}

// A session ends once, by the first cause: the host's Close (with DELETE)
// is session.ErrClosed, its Detach (none) session.ErrDetached; a later
// Close changes neither the cause nor sends a DELETE of a detached
// session.
func TestDialerSessionEndsByTheHost(t *testing.T) {
	g, url := newServer(t, nil)
	d := httpsession.NewDialer(httpsession.DialerOptions{Endpoint: url, Era: httpsession.Era2025, Stream: httpsession.SwitchConfig{Mode: httpsession.StreamOff}})
	t.Cleanup(func() { _ = d.Close() })

	s := dial(t, d, &facts{})
	st, changed := s.Status()
	require.Equal(t, session.Live, st)
	require.NoError(t, s.Err())
	require.NotEmpty(t, s.Info().ID)
	require.Equal(t, "2025-11-25", s.Info().ProtocolVersion)
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)

	require.NoError(t, s.Close())
	within(t, changed, "a change of status")
	require.ErrorIs(t, ended(t, s), session.ErrClosed)
	require.Equal(t, 1, g.count("DELETE", ""))

	s2 := dial(t, d, &facts{})
	require.NoError(t, s2.Detach())
	require.ErrorIs(t, ended(t, s2), session.ErrDetached)
	require.NoError(t, s2.Close())
	require.ErrorIs(t, s2.Err(), session.ErrDetached, "the first cause wins")
	require.Equal(t, 1, g.count("DELETE", ""), "a detached session is not deleted")
}

// TestDialerIdleSessionHoldsNoWaiter: an idle session keeps no goroutine of
// its own blocked on go-sdk's Wait to learn of its end (go-sdk closes its
// connection as it ends); its end is still reported once.
func TestDialerIdleSessionHoldsNoWaiter(t *testing.T) {
	_, url := newServer(t, nil)
	d := httpsession.NewDialer(httpsession.DialerOptions{Endpoint: url, Era: httpsession.Era2025, Stream: httpsession.SwitchConfig{Mode: httpsession.StreamOff}})
	t.Cleanup(func() { _ = d.Close() })
	s := dial(t, d, &facts{})
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	require.False(t, strings.Contains(stacks, "httpsession.(*httpSession).start.func"), "a goroutine waits for the idle session's end")
	require.NoError(t, s.Close())
	require.ErrorIs(t, ended(t, s), session.ErrClosed)
}

// A session-gone answer ends the session by itself (MCP 2025-11-25,
// basic/transports/streamable-http.mdx, Session Management: "When a client
// receives HTTP 404 in response to a request containing an
// MCP-Session-Id, it MUST start a new session"): its end carries that
// answer, and the host's Close after it does not replace the cause.
func TestDialerSessionEndsBySessionGone(t *testing.T) {
	g, url := newServer(t, nil)
	d := httpsession.NewDialer(httpsession.DialerOptions{Endpoint: url, Era: httpsession.Era2025, Stream: httpsession.SwitchConfig{Mode: httpsession.StreamOff}})
	t.Cleanup(func() { _ = d.Close() })
	s := dial(t, d, &facts{})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "tools/call" {
			return false
		}
		writeFault(w, http.StatusNotFound, "text/plain", "session not found", nil)
		return true
	})
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.Error(t, err)
	cause := ended(t, s)
	var he *classify.HTTPError
	require.ErrorAs(t, cause, &he, "%v", cause)
	require.Equal(t, http.StatusNotFound, he.Exchange.Status)
	require.Equal(t, "tools/call", he.Exchange.Method)
	require.Equal(t, classify.SessionExpired, classify.Error(cause).Class)
	_ = s.Close()
	require.ErrorAs(t, s.Err(), &he, "the first cause wins")
}

// A 2026-07-28 session whose call is answered 400 -32022 (the server
// rolled back: basic/transports/streamable-http.mdx, Protocol Version
// Header, "the server MUST respond with 400 Bad Request" and -32022) ends,
// detached, with that answer; the era memory hears of it as an era change
// and the next handshake discovers again.
func TestDialerSessionEndsByAnEraRefusal(t *testing.T) {
	g, url := newServer(t, &mcp.StreamableHTTPOptions{Stateless: true})
	d := httpsession.NewDialer(httpsession.DialerOptions{Endpoint: url, Stream: httpsession.SwitchConfig{Mode: httpsession.StreamOff}})
	t.Cleanup(func() { _ = d.Close() })
	f := &facts{}
	s := dial(t, d, f)
	require.Equal(t, "2026-07-28", s.Info().ProtocolVersion)
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "tools/call" {
			return false
		}
		writeFault(w, http.StatusBadRequest, "application/json",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"unsupported protocol version"}}`, nil)
		return true
	})
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.Error(t, err)
	cause := ended(t, s)
	var he *classify.HTTPError
	require.ErrorAs(t, cause, &he, "%v", cause)
	require.Equal(t, http.StatusBadRequest, he.Exchange.Status)
	require.Equal(t, int64(httpsession.CodeUnsupportedProtocolVersion), he.Exchange.RPC.Code)
	changes := f.eraChanges()
	require.Len(t, changes, 1, "%v", changes)
	require.Equal(t, session.EraRefusedOpening, changes[0].Why)
	require.Zero(t, g.count("DELETE", ""), "ended detached")
}

// A dead keepalive ping (session.Verify's; no HTTP answer: the connection
// cut) ends the session, without DELETE, with the ping's error as its cause.
func TestDialerSessionEndsByItsKeepAlive(t *testing.T) {
	g, url := newServer(t, nil)
	clock := clockwork.NewFakeClock()
	d := httpsession.NewDialer(httpsession.DialerOptions{Endpoint: url, Era: httpsession.Era2025, Stream: httpsession.SwitchConfig{Mode: httpsession.StreamOff},
		Transport: httpsession.Config{Clock: clock}})
	t.Cleanup(func() { _ = d.Close() })
	s := session.Verify(dial(t, d, &facts{}).(session.Endable), session.VerifyConfig{KeepAlive: time.Minute, Clock: clock})
	g.setFault(func(w http.ResponseWriter, r *http.Request, method string, n int) bool {
		if method != "ping" {
			return false
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		require.NoError(t, err)
		_ = conn.Close() // no answer at all: a transport failure
		return true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, clock.BlockUntilContext(ctx, 1)) // the keepalive's ticker
	clock.Advance(time.Minute)
	cause := ended(t, s)
	require.True(t, strings.Contains(cause.Error(), "keepalive ping"), "%v", cause)
	require.False(t, errors.Is(cause, session.ErrClosed))
	require.NoError(t, s.Close()) // its owner releases it: a dead session gets no DELETE
	require.Zero(t, g.count("DELETE", ""), "ended detached")
	require.ErrorIs(t, s.Err(), cause, "the first cause stays")
}

// The stream decision outlives sessions: a remembered Off decision is the
// dialer's until its memory ends, then a StreamDecided fact says the
// stream is on again (failure story S5).
func TestDialerStreamDecision(t *testing.T) {
	clock := clockwork.NewFakeClock()
	observed := make(chan session.Fact, 4)
	since := clock.Now().Add(-30 * time.Minute)
	d := httpsession.NewDialer(httpsession.DialerOptions{Endpoint: "http://127.0.0.1:1/", Stream: httpsession.SwitchConfig{Mode: httpsession.StreamAuto,
		Memory: time.Hour, Remembered: httpsession.StreamDecision{Off: true, Since: since},
		OnStream: func(f httpsession.StreamDecision) { observed <- f }}, Transport: httpsession.Config{Clock: clock}})
	t.Cleanup(func() { _ = d.Close() })
	got := d.StreamDecision()
	require.True(t, got.Off)
	require.Equal(t, since, got.Since)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	clock.Advance(30 * time.Minute)
	select {
	case f := <-observed:
		sd, ok := f.(session.StreamDecided)
		require.True(t, ok, "%T", f)
		require.False(t, sd.Off)
	case <-ctx.Done():
		t.Fatal("no StreamDecided fact")
	}
	require.False(t, d.StreamDecision().Off)
	require.Empty(t, observed, "one change, one fact")
}

package supervisor_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// leakyServer is a small MCP server on 127.0.0.1 that hands out session ids
// and rejects them the ways real servers do, so that go-sdk writes its own
// error texts around them:
//   - the first handshake's notifications/initialized is answered 404 (go-sdk:
//     "failed to connect (session ID: <id>)"), so the handshake fails;
//   - the first tools/call is answered 404 (session expired);
//   - the second with the TypeScript SDK's 400 null-id -32000, whose message
//     repeats the id;
//   - the third succeeds but names another session id (go-sdk: "mismatching
//     session IDs %q and %q");
//   - once pingFails is set, the next ping is answered 404, which go-sdk's
//     keepalive logs with its error text.
type leakyServer struct {
	ids func(n int) string // the n-th session's id

	mu        sync.Mutex
	sessions  int
	calls     int
	failInit  bool
	pingFails bool
	seen      []string // Authorization headers received
}

func (s *leakyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, r.Header.Get("Authorization"))
	if r.Method == http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if r.Method == http.MethodDelete {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	sid := r.Header.Get("Mcp-Session-Id")
	answer := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}
	switch msg.Method {
	case "initialize":
		s.sessions++
		w.Header().Set("Mcp-Session-Id", s.ids(s.sessions))
		answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"leaky","version":"1"}}`)
	case "tools/list":
		if !s.failInit {
			// The first session's discovery is refused: go-sdk's text of
			// it names the session id.
			s.failInit = true
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		answer(`{"tools":[{"name":"search","inputSchema":{"type":"object"}}]}`)
	case "ping":
		if s.pingFails {
			s.pingFails = false
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		answer(`{}`)
	case "tools/call":
		s.calls++
		switch s.calls {
		case 1:
			http.Error(w, "session not found", http.StatusNotFound)
		case 2:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			q, _ := json.Marshal("Bad Request: No valid session ID provided (session ID: " + sid + ")")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":%s}}`, q)
		case 3:
			w.Header().Set("Mcp-Session-Id", s.ids(0))
			answer(`{"content":[{"type":"text","text":"ok"}]}`)
		default:
			answer(`{"content":[{"type":"text","text":"ok"}]}`)
		}
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// TestNoSecretReachesText runs a supervisor against leakyServer on an
// endpoint with userinfo and credential query values, and collects every
// text the supervisor hands out: the events (JSON lines, as delivered to
// Config.Observe.Events), Config.Observe.Logger's and go-sdk's ClientOptions.Logger's
// records, the errors of calls, of WaitForState and of New, the verdicts of
// Failure and the events, and String. None may hold a session id the server
// issued, a credential of the endpoint or the Basic credential net/http
// derives from it. Session ids long and short.
func TestNoSecretReachesText(t *testing.T) {
	for _, c := range []struct {
		name string
		ids  func(n int) string
	}{
		{"long ids", func(n int) string { return fmt.Sprintf("7f3c2a9be1d04c5b9a0e6d2f41c8b7a%d", n) }},
		{"short ids", func(n int) string { return fmt.Sprintf("Q7#%d", n) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := &leakyServer{ids: c.ids}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			const user, pass, tok, key = "alice", "hunter2pw", "tok3n-SECRET", "k3y-SECRET"
			endpoint := strings.Replace(ts.URL, "http://", "http://"+user+":"+pass+"@", 1) + "/mcp?token=" + tok + "&api_key=" + key

			var evBuf, logBuf, sdkBuf bytes.Buffer
			var mu sync.Mutex // the buffers are written from several goroutines
			locked := func(w io.Writer) io.Writer {
				return writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return w.Write(p) })
			}
			rec := &events.Recorder{}
			cfg := supervisor.Config{
				Endpoint: endpoint, // Name defaults to it
				Era:      supervisor.Era2025,
				Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
				Observe: supervisor.ObserveConfig{
					Events: events.Multi(rec, events.NewJSONLines(locked(&evBuf))),
					Logger: slog.New(slog.NewJSONHandler(locked(&logBuf), &slog.HandlerOptions{Level: slog.LevelDebug})),
				},
				Client: supervisor.ClientConfig{ClientOptions: mcp.ClientOptions{Logger: slog.New(slog.NewJSONHandler(locked(&sdkBuf), &slog.HandlerOptions{Level: slog.LevelDebug}))}},
				Recovery: supervisor.RecoveryConfig{
					KeepAlive: 20 * time.Millisecond,
					Backoff:   supervisor.Backoff{InitialInterval: 1, MaxInterval: 1, NoJitter: true},
				},
			}
			sup, err := supervisor.New(cfg)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
			defer cancel()
			sup.Start()
			require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))

			var texts []string
			add := func(what string, s string) { texts = append(texts, what+": "+s) }
			var ce *supervisor.CallError
			for i := range 4 {
				_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{}})
				if err != nil {
					require.ErrorAs(t, err, &ce)
					add("call error", err.Error())
					add("call error %v", fmt.Sprintf("%v", err))
					add("call verdict", ce.Verdict.Detail+" "+ce.Verdict.RPC.Message)
				}
				if i < 2 {
					require.Error(t, err, "call %d", i)
					require.Equal(t, classify.SessionExpired, ce.Verdict.Class, "call %d: %v", i, err)
				}
				require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
			}
			srv.mu.Lock()
			srv.pingFails = true
			srv.mu.Unlock()
			// The refused ping ends the pinged session (the keepalive's
			// verdict, or go-sdk's session-gone path, whichever is first):
			// wait for the event that says so, with go-sdk's text in it.
			_, err = rec.WaitFor(ctx, func(evs []events.Event) bool {
				for _, e := range evs {
					if e.Kind == events.KindSessionEnded && e.Verdict.Method == "ping" {
						return true
					}
				}
				return false
			})
			require.NoError(t, err, "the refused ping ended its session")
			_, v := sup.Failure()
			add("failure verdict", v.Detail+" "+v.RPC.Message)
			add("String", sup.String())
			add("%v", fmt.Sprintf("%v", sup))
			rs := sup.ResumeState()
			require.NotNil(t, rs)
			liveID := rs.SessionID
			require.NoError(t, sup.Close())
			add("closed", fmt.Sprint(sup.WaitForState(ctx, supervisor.Ready)))

			other := *rs
			other.Endpoint = "https://bob:s3cr3tpw@elsewhere.test/mcp?access_token=" + tok
			_, err = supervisor.New(supervisor.Config{Endpoint: endpoint, Resume: &other})
			require.Error(t, err)
			add("resume error", err.Error())
			_, err = supervisor.New(supervisor.Config{Endpoint: "http://" + user + ":" + pass + "@[::1%zz]/mcp?token=" + tok})
			require.Error(t, err)
			add("endpoint error", err.Error())
			_, err = supervisor.New(supervisor.Config{Endpoint: "ftp://" + user + ":" + pass + "@h.test/?token=" + tok})
			require.Error(t, err)
			add("scheme error", err.Error())

			mu.Lock()
			add("events", evBuf.String())
			add("log", logBuf.String())
			add("go-sdk log", sdkBuf.String())
			mu.Unlock()
			all := strings.Join(texts, "\n")

			srv.mu.Lock()
			n, basic := srv.sessions, srv.seen
			srv.mu.Unlock()
			require.GreaterOrEqual(t, n, 4, "a failed discovery, two sessions replaced by calls, the pinged one")
			secrets := []string{user, pass, tok, key, "s3cr3tpw", "bob", base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))}
			require.Contains(t, basic, "Basic "+secrets[len(secrets)-1], "net/http sent the userinfo as a credential")
			for i := 0; i <= n; i++ { // 0: the id named on a later answer
				secrets = append(secrets, c.ids(i))
			}
			for _, s := range secrets {
				require.NotContains(t, all, s, "a secret survived")
			}
			// The texts still say what happened, with hashes in place.
			require.Contains(t, all, events.HashSessionID(liveID))
			for i := 1; i <= 4; i++ { // a failed discovery, two sessions replaced by calls, the pinged one
				require.Contains(t, all, events.HashSessionID(c.ids(i)), "session %d is followed by its hash", i)
			}
			require.Contains(t, all, `"method":"ping"`, "the pinged session's end is there")
			require.Contains(t, all, "session-expired")
			require.Contains(t, all, "mcpsup.Supervisor(http://[redacted]@127.0.0.1:")
			// The first session's refused discovery reaches the machine as
			// discovery-failed or, when go-sdk's session ends first on the
			// 404, as session-died: either transition carries go-sdk's text.
			var refused bool
			for _, e := range rec.Events() {
				require.NotContains(t, e.Server, pass)
				if e.Kind == events.KindTransition && e.Generation == 1 && e.Verdict.Class == classify.SessionExpired {
					refused = true
					require.NotEmpty(t, e.Verdict.Detail)
				}
			}
			require.True(t, refused, "the first session's discovery was refused")
			require.True(t, errors.Is(sup.WaitForState(ctx, supervisor.Ready), supervisor.ErrClosed))
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// bearerRT is a host's RoundTripper that adds its own bearer token to a
// copy of every request, as Config.HTTP.HTTPClient's credentials are added.
type bearerRT struct {
	base  http.RoundTripper
	token string
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// A credential the host's own HTTPClient puts on its requests, which the
// supervisor is never told of, is masked where a server quotes it: in a
// JSON-RPC error's message, which reaches the call's verdict and the
// call-failed event.
func TestHostClientCredentialIsMasked(t *testing.T) {
	const token = "zzSecretBearer9f8e7d6c5b4a"
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	rec := &events.Recorder{}
	sup, err := supervisor.New(supervisor.Config{
		Endpoint: srv.URL(),
		Era:      supervisor.Era2025,
		HTTP:     supervisor.HTTPConfig{HTTPClient: &http.Client{Transport: bearerRT{srv.HTTPClient().Transport, token}}},
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Observe:  supervisor.ObserveConfig{Events: rec},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"},
		Action: mcptest.Template(http.StatusOK, http.Header{"Content-Type": {"application/json"}},
			`{"jsonrpc":"2.0","id":$ID,"error":{"code":-32001,"message":"credential `+token+` may not call this tool"}}`)})
	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "x"}})
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	require.EqualValues(t, -32001, ce.Verdict.RPC.Code, "the server's error reached the call")
	supervisor.FlushEvents(sup)
	texts := []string{err.Error(), ce.Verdict.Detail, ce.Verdict.RPC.Message}
	for _, e := range rec.Events() {
		b, err := e.MarshalJSON()
		require.NoError(t, err)
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		require.NotContains(t, text, token)
	}
	require.Contains(t, ce.Verdict.RPC.Message, "credential [redacted] may not")
}

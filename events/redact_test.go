package events_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
)

const (
	token     = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.sig-_xyz"
	sessionID = "7f3c2a9be1d04c5b9a0e6d2f41c8b7aa"
	cookie    = "gw_session=Zm9vYmFyYmF6"
)

// leakyEvent puts credentials and the session id into every string field,
// the way go-sdk and HTTP libraries print them.
func leakyEvent() events.Event {
	sdk := fmt.Sprintf("standalone SSE request failed (session ID: %s): GET: 403 Forbidden", sessionID)
	hdr := fmt.Sprintf("request headers: map[Authorization:[Bearer %s] Cookie:[%s] Mcp-Session-Id:[%s]]", token, cookie, sessionID)
	v := classify.Verdict{Class: classify.Forbidden, HTTPStatus: 403, Detail: sdk + "; " + hdr,
		RPC: classify.RPCError{Present: true, Code: -32000, Message: "Authorization: Bearer " + token}}
	return events.Event{
		Kind: events.KindCallFailed, Server: "srv", Op: "tools/call", Name: "https://x.test/a?access_token=" + token,
		Verdict: v, Detail: "retrying with Cookie: " + cookie + "\nnext line kept",
		SessionID: sessionID, Lists: []events.ListOutcome{{List: "tools", Status: events.ListFailed, Verdict: v, Warning: sdk}},
		Added: []string{"bearer " + token},
	}
}

func TestRedactedEventsLeakNothing(t *testing.T) {
	var r events.Redactor
	r.AddSessionID(sessionID)
	r.AddSecret(token)

	e := leakyEvent()
	red := r.Redact(e)
	b, err := json.Marshal(red)
	require.NoError(t, err)
	out := string(b)
	for _, secret := range []string{token, sessionID, "Zm9vYmFyYmF6", "c2VjcmV0"} {
		require.NotContains(t, out, secret)
	}
	hash := events.HashSessionID(sessionID)
	require.Equal(t, hash, red.SessionID)
	require.Contains(t, red.Verdict.Detail, "(session ID: "+hash+"): GET: 403 Forbidden", "the hash stands where the id was")
	require.Contains(t, red.Detail, "next line kept", "masking stops at the end of the line")
	require.Equal(t, leakyEvent(), e, "the input event and its slices are not modified")
	require.Equal(t, red, r.Redact(red), "redaction is idempotent")
}

func TestPatternsRedactWithoutRegistration(t *testing.T) {
	var r events.Redactor // knows nothing: patterns only
	red := r.Redact(leakyEvent())
	b, err := json.Marshal(red)
	require.NoError(t, err)
	for _, secret := range []string{token, sessionID, "Zm9vYmFyYmF6"} {
		require.NotContains(t, string(b), secret)
	}
	require.Contains(t, red.Lists[0].Warning, "(session ID: "+events.HashSessionID(sessionID)+")")
	require.Contains(t, red.Verdict.Detail, "Mcp-Session-Id:["+events.HashSessionID(sessionID)+"]")
	require.Equal(t, red, r.Redact(red))

	var nilR *events.Redactor
	require.Equal(t, red, nilR.Redact(leakyEvent()), "a nil Redactor applies the patterns")
}

func TestRedactorText(t *testing.T) {
	var r events.Redactor
	r.AddSecret("hunter2")
	h := events.HashSessionID("abc-123")
	for in, want := range map[string]string{
		"Authorization: Bearer abc.def":                             "Authorization: [redacted]",
		`{"authorization":"Basic dXNlcjpwYXNz","x":1}`:              `{"authorization":"[redacted]","x":1}`,
		"got bearer abc.def= back":                                  "got bearer [redacted] back",
		"Set-Cookie: a=b; Path=/":                                   "Set-Cookie: [redacted]",
		"X-Api-Key: k1":                                             "X-Api-Key: [redacted]",
		"GET /sse?token=abc&x=1":                                    "GET /sse?token=[redacted]&x=1",
		"failed to connect (session ID: abc-123): gone":             "failed to connect (session ID: " + h + "): gone",
		"exceeded 5 retries without progress (session ID: abc-123)": "exceeded 5 retries without progress (session ID: " + h + ")",
		"session ID: abc-123":                                       "session ID: " + h,
		"Mcp-Session-Id: abc-123":                                   "Mcp-Session-Id: " + h,
		"map[Mcp-Session-Id:[abc-123] X:[y]]":                       "map[Mcp-Session-Id:[" + h + "] X:[y]]",
		`{"session_id":"abc-123"}`:                                  `{"session_id":"` + h + `"}`,
		"(session ID: ): no session yet":                            "(session ID: ): no session yet",
		"password hunter2 typed":                                    "password [redacted] typed",
		"JSON-RPC code=-32601 Method not found":                     "JSON-RPC code=-32601 Method not found",
		"":                                                          "",
	} {
		got := r.Text(in)
		require.Equal(t, want, got, in)
		require.Equal(t, got, r.Text(got), "idempotent: %s", in)
	}
}

func TestRedactorSecretsLongestFirstAndForget(t *testing.T) {
	var r events.Redactor
	r.AddSecret("abc")
	r.AddSecret("abcdef")
	require.Equal(t, "x [redacted] y [redacted]z", r.Text("x abcdef y abcz"), "the longer secret is masked whole, a secret also inside a word")
	r.ForgetSecret("abcdef")
	require.Equal(t, "x [redacted]def y", r.Text("x abcdef y"))
	r.ForgetSecret("abc")
	require.Equal(t, "x abcdef y", r.Text("x abcdef y"))

	r.AddSecret("s3cr3t-t0ken-value")
	require.Equal(t, "cut: Bearer-less [redacted]", r.Text("cut: Bearer-less s3cr3t-t0k"), "a text cut inside a secret")
	require.Equal(t, "ends s3cr3", r.Text("ends s3cr3"), "too short a start to tell")

	id := "0123456789abcdef"
	r.AddSecret(id)
	r.AddSessionID(id)
	require.Equal(t, "[redacted]", r.Text(id), "a secret stays masked when also registered as a session id")
	r.AddSecret("")
	r.AddSessionID("")
	require.Equal(t, "plain", r.Text("plain"), "empty values are ignored")
}

func TestHashSessionID(t *testing.T) {
	h := events.HashSessionID("abc")
	require.Equal(t, "sid:ba7816bf", h, "sha256(abc) starts ba7816bf")
	require.Equal(t, h, events.HashSessionID("abc"))
	require.NotEqual(t, h, events.HashSessionID("abd"))
}

func TestRedactConcurrent(t *testing.T) {
	var r events.Redactor
	var rec events.Recorder
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("session-%d-%s", i, strings.Repeat("z", 8))
			r.AddSessionID(id)
			rec.Emit(r.Redact(events.Event{Kind: events.KindSessionOpened, SessionID: id, Detail: "opened " + id}))
		}()
	}
	wg.Wait()
	require.Equal(t, 8, rec.Len())
	for _, e := range rec.Events() {
		require.Regexp(t, `^sid:[0-9a-f]{8}$`, e.SessionID)
		require.Equal(t, "opened "+e.SessionID, e.Detail)
	}
}

// TestRedactsSessionIDInGoSDKErrorText redacts the text of a real go-sdk
// error: a call in a session the server has ended fails with "... (session
// ID: <id>): session not found". The id was never registered: the pattern
// alone hashes it.
func TestRedactsSessionIDInGoSDKErrorText(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	defer srv.Close()
	ctx := t.Context()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "redact-test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient()},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	id := cs.ID()
	require.True(t, srv.ExpireSession(id))

	_, err = cs.ListTools(ctx, nil)
	require.ErrorIs(t, err, mcp.ErrSessionMissing)
	require.Contains(t, err.Error(), "(session ID: "+id+")")

	var r events.Redactor
	red := r.Redact(events.Event{Kind: events.KindCallFailed, Detail: err.Error(), Verdict: classify.Error(err)})
	require.NotContains(t, red.Detail, id)
	require.NotContains(t, red.Verdict.Detail, id)
	require.Contains(t, red.Detail, "(session ID: "+events.HashSessionID(id)+")")
	require.Contains(t, red.Verdict.Detail, "(session ID: "+events.HashSessionID(id)+")")
}

// A piece of a secret that a cut left is masked where the cut was: its
// start at the text's end or before "..." or "…", its end at the text's
// start or after one; a piece shorter than six bytes, or one inside the
// text away from any cut, is not a cut.
func TestSecretPieceAtACutIsMasked(t *testing.T) {
	const k = "Zq8rT2mW9xK4pL7vN3bY6cH1"
	r := &events.Redactor{}
	r.AddSecret(k)
	m := events.Masked
	for in, want := range map[string]string{
		"line: xx" + k[:10]:                          "line: xx" + m,
		`quote "xx` + k[:10] + `..."`:                `quote "xx` + m + `..."`,
		"a " + k[:7] + "… b":                         "a " + m + "… b",
		k[12:] + " more":                             m + " more",
		"stderr: …" + k[9:] + "zz\n":                 "stderr: …" + m + "zz\n",
		"x..." + k[4:] + " and " + k[:8] + "...y":    "x..." + m + " and " + m + "...y",
		"no cut " + k[:10] + " here, " + k[5:] + "!": "no cut " + k[:10] + " here, " + k[5:] + "!",
		"short " + k[:5] + "...":                     "short " + k[:5] + "...",
		"...":                                        "...",
	} {
		got := r.Text(in)
		require.Equal(t, want, got, "in %q", in)
		require.Equal(t, got, r.Text(got), "idempotent")
	}
}

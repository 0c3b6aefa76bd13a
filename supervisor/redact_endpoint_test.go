package supervisor_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/internal/lockedbuf"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// printedTexts starts a supervisor on endpoint (srv behind it), fails one
// call with no HTTP answer (net/http's error then quotes the URL), closes
// it, and returns the call's error and every text the endpoint may be
// printed in: the error, its verdict's detail, the logs, String and each
// event kind's JSON. rawErr is the error go-sdk's call gave, unredacted.
func printedTexts(t *testing.T, srv *mcptest.Server, endpoint string) (ce *supervisor.CallError, rawErr string, texts map[string]string, evs []events.Event) {
	t.Helper()
	rec := &events.Recorder{}
	logs := &lockedbuf.Buffer{}
	sup, err := supervisor.New(supervisor.Config{
		Endpoint: endpoint,
		HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Observe: supervisor.ObserveConfig{
			Events: rec,
			Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: mcptest.HoldHeaders(0)})
	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "x"}})
	require.True(t, errors.As(err, &ce), "%v", err)
	require.NoError(t, sup.Close())
	texts = map[string]string{"error": err.Error(), "detail": ce.Verdict.Detail, "logs": logs.String(), "String": sup.String()}
	evs = rec.Events()
	for _, e := range evs {
		b, err := e.MarshalJSON()
		require.NoError(t, err)
		texts["event "+string(e.Kind)] += string(b)
	}
	return ce, ce.Err.Error(), texts, evs
}

// The credentials an Endpoint carries in its query under names no pattern
// knows (camelCase, or no credential word at all) are masked everywhere
// the endpoint is printed: every event's server, a transport failure's
// verdict detail (net/http's error quotes the URL), the call's error, logs
// and String. Short values (under events.MinSessionIDLen) are left alone.
func TestEndpointQueryCredentialsMasked(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	// The last one holds a bad escape: url.ParseQuery drops it, net/http
	// sends it as written.
	secrets := []string{"aCCess7okenValue", "c0de-value-xyz", "userTok3n", "pass-w0rd-9", "Pr0of%zzSignature"}
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	u.User = url.UserPassword(secrets[2], secrets[3])
	u.RawQuery = url.Values{"accessToken": {secrets[0]}, "code": {secrets[1]}, "v": {"2"}}.Encode() + "&proof=" + secrets[4]

	// No HTTP answer: net/http's error names the URL, query included.
	ce, raw, texts, _ := printedTexts(t, srv, u.String())
	require.Equal(t, classify.Transport, ce.Verdict.Class)
	require.Contains(t, raw, "v=2", "the raw error names the URL")
	assert.Contains(t, texts["detail"], "v=2", "a short value stays")
	// The *url.Error a host reaches through errors.As names the URL with
	// its credentials masked too.
	var ue *url.Error
	require.True(t, errors.As(ce, &ue), "%v", ce)
	texts["url.Error"] = ue.Error()
	for where, text := range texts {
		for _, s := range secrets {
			assert.NotContains(t, text, s, "%s", where)
		}
	}
}

// TestEndpointPathCredentialsMasked: a "secret URL" server carries its
// credential in the endpoint's path (/s/<key>/mcp), where the patterns find
// none; the default Name is the endpoint, so every event's Server carried
// it, and net/http's errors name the URL. A path segment of at least
// minPathSecret bytes that reads as a key (a digit, or both cases) is
// registered as a secret; shorter ones, words such as "mcp" or "servers",
// and long names in lower case stay.
func TestEndpointPathCredentialsMasked(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	const key = "NjQ3ODk5MzEtYWJjZC00ZTk2"
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	u.Path = "/model-context-protocol-servers/s/" + key + "/mcp"
	_, raw, texts, evs := printedTexts(t, srv, u.String())
	require.Contains(t, raw, key, "the raw error names the URL")
	for _, e := range evs {
		assert.Contains(t, e.Server, "/model-context-protocol-servers/s/[redacted]/mcp", "a long name stays")
	}
	for where, text := range texts {
		assert.NotContains(t, text, key, "%s", where)
	}
}

// The errors of New that quote an endpoint mask its query credentials too.
func TestEndpointQueryCredentialsMaskedInConfigErrors(t *testing.T) {
	const mine, theirs = "Myacc3ssTokenValue", "Th3irAccessTokenValue"
	endpoint := "http://127.0.0.1:1/mcp?accessToken=" + mine
	_, err := supervisor.New(supervisor.Config{Endpoint: "ftp://127.0.0.1/mcp?accessToken=" + mine})
	var ee *supervisor.EndpointError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "want an absolute http or https URL", ee.Reason)
	assert.Contains(t, err.Error(), "accessToken=")
	assert.NotContains(t, err.Error(), mine)

	// url.Parse refuses it, and its error quotes the whole endpoint: no
	// chain leads to it.
	_, err = supervisor.New(supervisor.Config{Endpoint: "http://127.0.0.1:1/%zz?accessToken=" + mine})
	require.ErrorAs(t, err, &ee)
	assert.Contains(t, ee.Reason, "invalid URL escape")
	assert.NotContains(t, err.Error(), mine)
	for e := error(err); e != nil; e = errors.Unwrap(e) {
		assert.NotContains(t, e.Error(), mine)
	}

	_, err = supervisor.New(supervisor.Config{})
	require.ErrorAs(t, err, &ee)
	assert.Empty(t, ee.Endpoint)
	assert.Contains(t, ee.Reason, "missing")

	_, err = supervisor.New(supervisor.Config{Endpoint: endpoint, Resume: &supervisor.ResumeState{
		Version: supervisor.ResumeStateVersion, Endpoint: "http://127.0.0.1:2/mcp?accessToken=" + theirs,
		ResumeState: httpsession.ResumeState{SessionID: "abcdefgh12345678", ProtocolVersion: "2025-11-25"},
	}})
	var rse *supervisor.ResumeStateError
	require.True(t, errors.As(err, &rse), "%v", err)
	assert.Equal(t, "endpoint", rse.Field)
	assert.NotContains(t, err.Error(), mine)
	assert.NotContains(t, err.Error(), theirs)
}

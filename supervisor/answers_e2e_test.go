package supervisor_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// Hostile answers to one call, through the supervisor: the call fails alone
// with the verdict and delivery its answer gives; the session, its
// generation and the state stay. A 2xx answer the session refuses before
// go-sdk decodes it (malformed, over a msgcheck bound or AnswerLimits; MCP
// schema: a Result is a JSON object) is, as over stdio
// (TestCommandResultOverTheContentBoundIsRefused), an error that errors.Is
// classify.ErrProtocol and errors.As an *httpsession.AnswerRefusedError,
// inside its exchange's *classify.HTTPError; the server's own error
// statuses and a broken connection are neither.
func TestHostileAnswersFailTheCallAlone(t *testing.T) {
	textHdr := http.Header{"Content-Type": {"text/plain"}}
	jsonHdr := http.Header{"Content-Type": {"application/json"}}
	blocks := strings.TrimSuffix(strings.Repeat(`{"type":"text","text":"x"},`, 6), ",")
	values := strings.TrimSuffix(strings.Repeat("{},", 200), ",")
	cases := []struct {
		name     string
		action   mcptest.Action
		class    classify.Class
		delivery supervisor.Delivery
		problem  string // a refused answer's, where the case names it
	}{
		{"JSON wrong id", mcptest.JSONBody(mcptest.BodyWrongID), classify.Protocol, supervisor.OutcomeUnknown, ""},
		{"JSON null result", mcptest.JSONBody(mcptest.BodyNullResult), classify.Protocol, supervisor.OutcomeUnknown, ""},
		{"JSON notification", mcptest.JSONBody(mcptest.BodyNotification), classify.Protocol, supervisor.OutcomeUnknown, ""},
		{"SSE line without a colon", mcptest.SSE("garbage", ""), classify.Protocol, supervisor.OutcomeUnknown, ""},
		{"SSE ends without the response", mcptest.SSE(": keepalive", ""), classify.Protocol, supervisor.OutcomeUnknown, ""},
		{"SSE resumption refused", mcptest.SSE("id: 1", "retry: 1", "data:", ""), classify.Protocol, supervisor.OutcomeUnknown, ""},
		{"SSE oversized event", mcptest.Large(200, http.Header{"Content-Type": {"text/event-stream"}}, "data: ", 64<<20, 'x'), classify.Protocol, supervisor.OutcomeUnknown, ""},
		{"gzip bomb JSON", mcptest.Gzip(mcptest.Large(200, jsonHdr, `{"jsonrpc":"2.0","id":$ID,"result":{"a":"`, 512<<20, 'x')), classify.Protocol, supervisor.OutcomeUnknown, ""},
		{"302 to elsewhere", mcptest.Redirect(302, "http://127.0.0.1:1/mcp"), classify.Application, supervisor.Answered, ""},
		{"400 JSON-RPC error then padding", mcptest.Large(400, jsonHdr, `{"jsonrpc":"2.0","id":$ID,"error":{"code":-32603,"message":"x"}}`, 64<<20, ' '), classify.Application, supervisor.Answered, ""},
		{"403 large HTML", mcptest.Large(403, textHdr, "<html>", 64<<20, 'a'), classify.Forbidden, supervisor.Answered, ""},
		{"JSON body over AnswerLimits.JSON", mcptest.Large(200, jsonHdr, `{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"`, 8<<10, 'x'),
			classify.Protocol, supervisor.OutcomeUnknown, "JSON body larger than 4096 bytes"},
		{"content blocks over AnswerLimits.ContentBlocks", mcptest.JSONBody(`{"jsonrpc":"2.0","id":$ID,"result":{"content":[` + blocks + `]}}`),
			classify.Protocol, supervisor.OutcomeUnknown, "tools/call result with more than 5 content blocks"},
		{"event over AnswerLimits.JSONValues", mcptest.SSE(mcptest.SSEMessage(`{"jsonrpc":"2.0","id":$ID,"result":{"content":[],"structuredContent":{"v":[` + values + `]}}}`)...),
			classify.Protocol, supervisor.OutcomeUnknown, "JSON-RPC message with more than 100 JSON values"},
		{"result not an object", mcptest.JSONBody(`{"jsonrpc":"2.0","id":$ID,"result":[]}`),
			classify.Protocol, supervisor.OutcomeUnknown, "response result is not a JSON object"},
		{"HTTP 500", mcptest.PlainText(500, "Internal Server Error"), classify.ServerError, supervisor.Answered, ""},
		{"connection reset", mcptest.Reset(), classify.Transport, supervisor.OutcomeUnknown, ""},
	}
	// The bomb is compressed as the client reads it, so the server's work
	// grows with the JSON bound: at the default 16 MiB it costs a second of
	// CPU under -race, which a loaded machine stretches toward the test's
	// budget. 4 KiB still holds every answer here but those over it;
	// httpsession's TestAnswerBounds holds bombs to a bound.
	limits := supervisor.AnswerLimits{JSON: 4 << 10, JSONValues: 100, ContentBlocks: 5}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, err := mcptest.NewServer(mcptest.Options{})
			require.NoError(t, err)
			t.Cleanup(srv.Close)
			sup, err := supervisor.New(supervisor.Config{Endpoint: srv.URL(), HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}, Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}, Limits: supervisor.LimitsConfig{AnswerLimits: limits}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = sup.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sup.Start()
			require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
			rule := srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: c.action})

			_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "x"}})
			var ce *supervisor.CallError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, c.class, ce.Verdict.Class, "verdict %v", ce.Verdict)
			assert.Equal(t, c.delivery, ce.Delivery)
			var refused *httpsession.AnswerRefusedError
			if c.class == classify.Protocol {
				assert.ErrorIs(t, err, classify.ErrProtocol)
				require.ErrorAs(t, err, &refused)
				assert.Equal(t, "tools/call", refused.Method)
				if c.problem != "" {
					assert.Equal(t, c.problem, refused.Problem)
				}
				var facts *classify.HTTPError
				require.ErrorAs(t, err, &facts, "the exchange is kept")
				assert.Equal(t, 200, facts.Status)
			} else {
				assert.NotErrorIs(t, err, classify.ErrProtocol)
				assert.False(t, errors.As(err, &refused), "%v", err)
			}

			srv.Gateway().Remove(rule)
			res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "after"}})
			require.NoError(t, err)
			require.False(t, res.IsError)
			assert.Equal(t, supervisor.Ready, sup.State())
			assert.Equal(t, uint64(1), sup.Generation(), "same session")
			assert.Equal(t, 1, srv.Log().Count("initialize"))
			assert.Zero(t, srv.Log().CountVerb(http.MethodDelete))
		})
	}
}

// An invalid session id on every handshake answer: each handshake fails as
// protocol, each server-side session is ended with one DELETE, and the
// retries follow the backoff.
func TestInvalidHandshakeSessionIDRetriesOnBackoff(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: http.MethodPost, Method: "initialize"},
		Action: mcptest.WithHeader(mcptest.Pass(), "Mcp-Session-Id", "bad id"),
	})
	rec := &events.Recorder{}
	sup, err := supervisor.New(supervisor.Config{
		Endpoint: srv.URL(),
		HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Observe:  supervisor.ObserveConfig{Events: rec},
		Recovery: supervisor.RecoveryConfig{Backoff: supervisor.Backoff{InitialInterval: 5 * time.Millisecond, NoJitter: true, MaxAttempts: 2}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sup.Start()
	require.NoError(t, srv.Log().WaitCount(ctx, "initialize", 3), "the first attempt and two retries")
	require.Eventually(t, func() bool { return srv.Log().CountVerb(http.MethodDelete) == 3 },
		10*time.Second, 5*time.Millisecond, "one DELETE per refused handshake")
	supervisor.FlushEvents(sup) // the retries were scheduled before the initialize they led to
	retries := 0
	for _, e := range rec.Events() {
		if e.Kind == events.KindRetryScheduled {
			retries++
			assert.Equal(t, classify.Protocol, e.Verdict.Class, "%+v", e)
		}
	}
	assert.GreaterOrEqual(t, retries, 2)
	assert.Zero(t, srv.Log().Count("notifications/initialized"), "no handshake went further")
}

// Config.Limits.AnswerLimits reach the wire: a tool result larger than a host's
// JSON limit fails that call alone as protocol; the next, smaller one is
// answered on the same session.
func TestAnswerLimitsBoundACall(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	sup, err := supervisor.New(supervisor.Config{
		Endpoint: srv.URL(),
		HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Limits:   supervisor.LimitsConfig{AnswerLimits: supervisor.AnswerLimits{JSON: 4 << 10}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	jsonHdr := http.Header{"Content-Type": {"application/json"}}
	rule := srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.Large(200, jsonHdr, `{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"`, 8<<10, 'x')})

	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "big"}})
	var ce *supervisor.CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, classify.Protocol, ce.Verdict.Class, "verdict %v", ce.Verdict)

	srv.Gateway().Remove(rule)
	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "small"}})
	require.NoError(t, err, "a default-size answer under the limit")
	assert.Equal(t, uint64(1), sup.Generation(), "same session")
	assert.Equal(t, 1, srv.Log().Count("initialize"))
}

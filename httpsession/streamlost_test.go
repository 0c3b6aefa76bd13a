package httpsession_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
)

// The 2026-07-28 changelog, item 9 (SEP-2575): "Remove SSE stream
// resumability and message redelivery (the Last-Event-ID header and SSE
// event IDs) from the Streamable HTTP transport. A broken response stream
// loses the in-flight request; clients MUST re-issue it as a new request
// with a new request ID." A call's stream that breaks after an event with
// an id is therefore never resumed on 2026-07-28 (no GET, no
// Last-Event-ID): the call fails alone, its record says the request was
// lost with its stream, and a reset (no complete HTTP answer) is
// classified transport, outcome unknown. A stream that ends cleanly
// without the response is lost too, and stays protocol.
func TestAnswerStreamLostOn2026(t *testing.T) {
	priming := []string{"id: 1", "retry: 1", "data:", ""}
	cases := []struct {
		name   string
		action mcptest.Action
		class  classify.Class
		broken bool // a transport error, not a malformed answer
	}{
		{"reset after an event id", mcptest.ServerThen(mcptest.SSEThenReset(priming...)), classify.Transport, true},
		{"ended after an event id", mcptest.ServerThen(mcptest.SSE(priming...)), classify.Protocol, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHostile(t, mcptest.Sessionless2026, httpsession.Config{})
			h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: c.action})
			v, _, err := h.call(t, "x")
			require.Error(t, err)
			assert.Equal(t, c.class, v.Class, "verdict %v", v)
			assert.Equal(t, classify.DeliveryOutcomeUnknown, classify.DeliveryOf(err, v), "the server ran it; the client cannot know")
			facts, ok := errors.AsType[*classify.HTTPError](err)
			require.True(t, ok, "%v", err)
			assert.True(t, facts.StreamLost, "the record says the request was lost with its stream: %+v", facts.Exchange)
			assert.Equal(t, c.broken, facts.TransportErr != nil, "%+v", facts.Exchange)
			assert.Equal(t, 1, h.srv.Invocations(mcptest.RecordTool, "x"), "the server ran the request once")

			assert.Zero(t, h.srv.Log().CountVerb(http.MethodGet), "no resumption: no GET on 2026-07-28")
			for _, e := range h.srv.Log().Entries() {
				assert.Empty(t, e.LastEventID, "no request carries Last-Event-ID: %+v", e)
			}
			h.srv.Gateway().Clear()
			v, _, err = h.call(t, "after")
			require.NoError(t, err, "the session serves the next call (verdict %v)", v)
		})
	}
}

// A reset mid-stream is no complete HTTP answer on any era: on 2025-11-25
// too, a stream without an event id (nothing to resume) that breaks is
// classified transport, not protocol, and is not marked lost (2025 has no
// re-issue rule).
func TestAnswerStreamResetIsTransportOn2025(t *testing.T) {
	h := newHostile(t, mcptest.Stateful2025, httpsession.Config{})
	h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"},
		Action: mcptest.ServerThen(mcptest.SSEThenReset(": keepalive", ""))})
	v, _, err := h.call(t, "x")
	require.Error(t, err)
	assert.Equal(t, classify.Transport, v.Class, "verdict %v", v)
	facts, ok := errors.AsType[*classify.HTTPError](err)
	require.True(t, ok, "%v", err)
	assert.False(t, facts.StreamLost)
	h.requireAlive(t)
}

// Every re-sent subscriptions/listen is a new request, so it carries an id
// of its own (basic/index.mdx, requests: "The request ID MUST NOT match the
// ID of any other request the sender has issued and not yet received a
// response for", and a cut listen got none; the server names the
// subscription by it, subscriptions.mdx, acknowledgment). Three listens,
// three ids.
func TestListenReSentWithFreshIDs(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{Mode: mcptest.Sessionless2026, Tools: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ended := mcptest.StreamThenClose()
	rule := mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: mcptest.ListenMethod, Occurrence: mcptest.FirstN(2)}, Action: ended}
	srv.Gateway().Add(rule)
	_, err = open2026(t, srv.URL(), httpsession.Options{
		HTTPClient: srv.HTTPClient(),
		Client: mcp.NewClient(&mcp.Implementation{Name: "t"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
		}),
		Wire: httpsession.Config{Stream: httpsession.StreamConfig{InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, srv.Log().WaitCount(ctx, mcptest.ListenMethod, 3))
	ids := map[string]bool{}
	for _, e := range srv.Log().Entries() {
		if e.Method == mcptest.ListenMethod {
			require.NotEmpty(t, e.ID)
			assert.False(t, ids[e.ID], "listen id %s sent twice", e.ID)
			ids[e.ID] = true
			assert.Empty(t, e.LastEventID, "a listen is never a resumption")
		}
	}
	require.Len(t, ids, 3)
}

// A listen whose stream carried the server's acknowledgement reached the
// server, which took the subscription (subscriptions.mdx: the server "MUST
// send notifications/subscriptions/acknowledged as the first message"): a
// proxy that cuts it once idle made it end, not the server. Such an attempt
// did not fail at once and never counts toward the hostility rule (DESIGN
// S5: a stream that "fails at once, again and again").
func TestAcknowledgedListenDidNotFailAtOnce(t *testing.T) {
	srv, err := mcptest.NewServer(mcptest.Options{Mode: mcptest.Sessionless2026, Tools: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	cut := mcptest.ListenIdleCut(50 * time.Millisecond)
	cut.Match.Occurrence = mcptest.FirstN(3)
	srv.Gateway().Add(cut)
	attempted := make(chan httpsession.StreamAttempt, 8)
	_, err = open2026(t, srv.URL(), httpsession.Options{
		HTTPClient: srv.HTTPClient(),
		Client: mcp.NewClient(&mcp.Implementation{Name: "t"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
		}),
		Wire: httpsession.Config{
			// A span longer than the cut: without the acknowledgement, each
			// cut attempt would have failed at once.
			Stream:          httpsession.StreamConfig{Span: time.Hour, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond},
			OnStreamAttempt: func(a httpsession.StreamAttempt) { attempted <- a },
		},
	})
	require.NoError(t, err)
	tracker := httpsession.NewHostilityTracker(httpsession.HostilityRule{Threshold: 3}, time.Hour)
	tracker.ObserveExchange(httpsession.Exchange{Verb: http.MethodPost, Method: "tools/call", Status: 200})
	for i := range 3 {
		a := <-attempted
		require.Equal(t, i+1, a.Seq)
		assert.True(t, a.Acknowledged, "%+v", a)
		assert.Zero(t, a.Messages, "the acknowledgement is no message")
		assert.False(t, a.FailedAtOnce(time.Hour), "%+v", a)
		assert.False(t, tracker.ObserveAttempt(a), "an acknowledged listen is no evidence of hostility")
	}
	hostile, why := tracker.Hostile()
	assert.False(t, hostile, why)
}

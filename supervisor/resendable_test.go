package supervisor

import (
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// annotatedSession serves "plain" (no annotations), "ro" (readOnlyHint),
// "idem" (idempotentHint) and "destructive" (annotations, neither hint).
func annotatedSession(id string) *fakeSession {
	s := newFakeSession(id, "plain", "ro", "idem", "destructive")
	s.tools[1].Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	s.tools[2].Annotations = &mcp.ToolAnnotations{IdempotentHint: true}
	s.tools[3].Annotations = &mcp.ToolAnnotations{Title: "rm"}
	return s
}

// failedCall calls tool on a ready supervisor whose next tools/call fails
// with err, and returns the CallError.
func failedCall(t *testing.T, tool string, err error) *CallError {
	t.Helper()
	r := newRig(t, Config{})
	sess := annotatedSession("s1")
	r.ready(sess)
	sess.failNextCall(err)
	_, got := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: tool})
	var ce *CallError
	require.ErrorAs(t, got, &ce)
	return ce
}

func TestResendableByDeliveryAndAnnotation(t *testing.T) {
	// The request went out (wire facts) and no answer came.
	cut := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 200}, Err: io.ErrUnexpectedEOF}
	// The server answered 500.
	answered := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 500}}
	// The server refused it for its session: it never ran.
	expired := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 404, SessionIDSent: true}}
	for _, tc := range []struct {
		tool       string
		err        error
		delivery   Delivery
		resendable bool
	}{
		{"plain", cut, OutcomeUnknown, false},
		{"destructive", cut, OutcomeUnknown, false},
		{"ro", cut, OutcomeUnknown, true},
		{"idem", cut, OutcomeUnknown, true},
		{"plain", answered, Answered, false},
		{"idem", answered, Answered, false},
		{"plain", expired, Answered, true},
		{"plain", &classify.NotSentError{Err: io.EOF}, NotSent, true},
	} {
		t.Run(tc.tool+"/"+tc.delivery.String(), func(t *testing.T) {
			ce := failedCall(t, tc.tool, tc.err)
			require.Equal(t, tc.delivery, ce.Delivery, "%v", ce)
			require.Equal(t, tc.resendable, ce.Resendable(), "%v", ce)
		})
	}
}

// A call refused locally was never sent: resendable whatever the tool.
func TestResendableWhenRefusedLocally(t *testing.T) {
	r := newRig(t, Config{})
	r.ready(annotatedSession("s1"))
	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "missing"})
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, ErrUnknownTool)
	require.Equal(t, NotSent, ce.Delivery)
	require.True(t, ce.Resendable())
}

// Only tools/call consults the annotations: another method whose outcome
// is unknown is not resendable.
func TestResendableOnlyForTools(t *testing.T) {
	ce := &CallError{Op: "prompts/get", Name: "ro", Delivery: OutcomeUnknown}
	require.False(t, ce.Resendable())
	r := newRig(t, Config{})
	r.ready(annotatedSession("s1"))
	require.False(t, r.sup.toolRepeatable("prompts/get", "ro"))
	require.True(t, r.sup.toolRepeatable("tools/call", "ro"))
	require.False(t, r.sup.toolRepeatable("tools/call", "plain"))
}

// A call go-sdk never sent (its connection had failed) is resent once under
// ResendSafe, after the session was verified; under the default it is not.
func TestResendSafeResendsANotSentCall(t *testing.T) {
	for _, policy := range []ResendPolicy{ResendNever, ResendSafe} {
		t.Run(policy.String(), func(t *testing.T) {
			r := newRig(t, Config{Recovery: RecoveryConfig{Resend: policy}})
			sess := newFakeSession("s1", "a")
			sess.callErr = &classify.NotSentError{Err: io.EOF}
			r.ready(sess)
			_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
			if policy == ResendNever {
				var ce *CallError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, NotSent, ce.Delivery)
				require.Len(t, sess.toolCalls(), 1)
				return
			}
			require.NoError(t, err, "the resend was answered")
			require.Len(t, sess.toolCalls(), 2)
			resent := r.waitEvents(events.KindCallResent, 1)
			require.Equal(t, "not-sent", resent[0].Delivery)
			require.Equal(t, uint64(1), r.sup.Generation(), "the verified session served it")
		})
	}
}

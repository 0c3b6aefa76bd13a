package httpsession

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
)

// attach types a call's error as an *AnswerRefusedError (errors.Is
// classify.ErrProtocol) exactly when the session refused a 2xx answer that
// classify reads as protocol: a malformed or over-bound body or event, a
// 2026-07-28 stream that ended without the response (changelog item 9). A
// rewritten non-2xx, a broken stream and a well-formed error answer keep
// their own facts.
func TestAttachTypesARefusedAnswer(t *testing.T) {
	sdkErr := errors.New(`calling "tools/call": HTTP 200 OK (JSON body larger than 4096 bytes)`)
	call := Exchange{Verb: "POST", Method: "tools/call", RequestID: "3", Status: 200, ContentType: "application/json"}
	with := func(f func(*Exchange)) Exchange { x := call; f(&x); return x }
	for _, c := range []struct {
		name    string
		x       Exchange
		refused bool
		class   classify.Class
	}{
		{"body over a bound", with(func(x *Exchange) {
			x.Rewritten, x.Malformed, x.Oversized, x.Problem = true, true, true, "JSON body larger than 4096 bytes"
		}), true, classify.Protocol},
		{"stream ended without the response", with(func(x *Exchange) {
			x.ContentType, x.Rewritten, x.Malformed, x.StreamLost, x.Problem = "text/event-stream", true, true, true, "SSE stream ended without the response"
		}), true, classify.Protocol},
		{"stream broke off", with(func(x *Exchange) {
			x.ContentType, x.Rewritten, x.TransportErr, x.Problem = "text/event-stream", true, io.ErrUnexpectedEOF, "SSE stream broke off"
		}), false, classify.Transport},
		{"HTTP 502 rewritten", with(func(x *Exchange) { x.Status, x.ContentType, x.Rewritten = 502, "text/html", true }), false, classify.ServerError},
		{"redirect not followed", with(func(x *Exchange) { x.Status, x.Rewritten, x.Problem = 302, true, "redirect not followed" }), false, classify.Application},
		{"JSON-RPC error -32601 in a refused body", with(func(x *Exchange) {
			x.Rewritten, x.Malformed, x.Problem = true, true, "bad"
			x.RPC = classify.RPCError{Present: true, Code: classify.CodeMethodNotFound, HasID: true}
		}), false, classify.MethodNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := WithExchange(t.Context())
			s := ctx.Value(slotKey{}).(*Exchanges)
			s.add(c.x)
			err := attach(ctx, sdkErr, true) // as the session's middleware does
			assert.Equal(t, c.class, classify.Error(err).Class)
			assert.Equal(t, c.refused, errors.Is(err, classify.ErrProtocol))
			refused, ok := errors.AsType[*AnswerRefusedError](err)
			require.Equal(t, c.refused, ok, "%v", err)
			if ok {
				assert.Equal(t, c.x.Problem, refused.Problem)
				assert.Equal(t, "tools/call", refused.Method)
				assert.Equal(t, sdkErr.Error(), refused.Error(), "go-sdk's text is kept")
			}
		})
	}
}

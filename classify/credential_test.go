package classify_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"golang.org/x/oauth2"

	"github.com/mcpsup/mcpsup/classify"
)

// answerErr is a host round-tripper's error that carries the answer.
type answerErr struct{ resp *http.Response }

func (e *answerErr) Error() string                { return "credential refused" }
func (e *answerErr) HTTPResponse() *http.Response { return e.resp }

func answer(status int, wwwAuth string) *http.Response {
	h := http.Header{}
	if wwwAuth != "" {
		h.Set("WWW-Authenticate", wwwAuth)
	}
	return &http.Response{StatusCode: status, Header: h}
}

// A round-tripper error that wraps an HTTP answer is classified by that
// answer, not as transport, though net/http wraps it in a *url.Error.
func TestRoundTripperErrorCarriesAnswer(t *testing.T) {
	wrap := func(err error) error {
		return fmt.Errorf("calling: %w", &url.Error{Op: "Post", URL: "http://x", Err: err})
	}
	cases := []struct {
		name string
		err  error
		want classify.Class
		code int
	}{
		{"401 answer", wrap(&answerErr{answer(401, `Bearer realm="x"`)}), classify.Unauthorized, 401},
		{"403 insufficient_scope", wrap(&answerErr{answer(403, `Bearer error="insufficient_scope"`)}), classify.Unauthorized, 403},
		{"403 policy", wrap(&answerErr{answer(403, "")}), classify.Forbidden, 403},
		{"429", wrap(&answerErr{answer(429, "")}), classify.RateLimited, 429},
		{"token endpoint invalid_grant", wrap(&oauth2.RetrieveError{Response: answer(400, ""), ErrorCode: "invalid_grant"}), classify.Unauthorized, 401},
		{"token endpoint 503", wrap(&oauth2.RetrieveError{Response: answer(503, "")}), classify.ServerError, 503},
		{"credential source", wrap(fmt.Errorf("%w: %w", classify.ErrCredential, errors.New("keychain locked"))), classify.Unauthorized, 401},
		{"plain round-tripper error", wrap(errors.New("dial refused")), classify.Transport, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := classify.Error(c.err)
			assert.Equal(t, c.want, v.Class)
			assert.Equal(t, c.code, v.HTTPStatus)
		})
	}
}

// The answer's Retry-After travels with it, as for an answer that reached
// the caller.
func TestRoundTripperErrorCarriesRetryAfter(t *testing.T) {
	resp := answer(429, "")
	resp.Header.Set("Retry-After", "7")
	v := classify.Error(&url.Error{Op: "Post", URL: "http://x", Err: &answerErr{resp}})
	assert.Equal(t, classify.RateLimited, v.Class)
	assert.Equal(t, 7*time.Second, v.RetryAfter)
}

// A server may send its challenges in several WWW-Authenticate field lines
// (RFC 9110 section 11.6.1: the field "may contain more than one challenge"
// and, section 5.3, field lines combine as one comma-separated list): the
// insufficient_scope of the second line makes the 403 Unauthorized (MCP
// 2025-11-25 basic/authorization, Runtime Insufficient Scope Errors).
func TestInsufficientScopeInASecondFieldLine(t *testing.T) {
	resp := &http.Response{StatusCode: 403, Header: http.Header{}}
	resp.Header.Add("WWW-Authenticate", `Basic realm="legacy"`)
	resp.Header.Add("WWW-Authenticate", `Bearer error="insufficient_scope", scope="files:write"`)
	v := classify.Error(&answerErr{resp})
	assert.Equal(t, classify.Unauthorized, v.Class)
	assert.Equal(t, 403, v.HTTPStatus)
}

package classify

import (
	"errors"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// ErrCredential marks an error of the host's credential source: an OAuth
// handler's token source or authorization flow that could not produce a
// credential. An error that wraps it classifies as [Unauthorized] (the
// host must re-authorize; retrying cannot help).
var ErrCredential = errors.New("credentials unavailable")

// ResponseError is implemented by an error that carries the HTTP answer it
// was made from, as a host's credential round-tripper may return instead of
// the answer itself (a 401 it could not fix). Such an error classifies by
// that answer's status, WWW-Authenticate and Retry-After, as if the answer
// had reached the caller, not as [Transport]. *oauth2.RetrieveError (a token
// endpoint's refusal) is read the same way, see [InsufficientScope] and
// the package doc.
type ResponseError interface {
	error
	HTTPResponse() *http.Response
}

// InsufficientScope reports whether a WWW-Authenticate value carries the
// auth-param error="insufficient_scope" (RFC 6750 section 3.1), which makes
// a 403 [Unauthorized].
func InsufficientScope(wwwAuthenticate string) bool { return insufficientScope(wwwAuthenticate) }

// answerOf returns the HTTP facts of an error that carries an answer, nil
// for any other error. A token endpoint's refusal (RFC 6749 section 5.2: an
// error code such as invalid_grant, or a 400/401 without one) is recorded as
// a 401: the credential, not the MCP server, failed.
func answerOf(err error) *HTTPError {
	var resp *http.Response
	credential := false
	switch e := err.(type) {
	case *oauth2.RetrieveError:
		if e == nil {
			return nil
		}
		resp = e.Response
		credential = e.ErrorCode != "" || resp == nil ||
			resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized
	case ResponseError:
		resp = e.HTTPResponse()
	}
	if resp == nil && !credential {
		return nil
	}
	w := &HTTPError{Err: err}
	if resp != nil {
		w.Status = resp.StatusCode
		w.ContentType = resp.Header.Get("Content-Type")
		w.WWWAuthenticate = resp.Header.Get("WWW-Authenticate")
		// An HTTP-date is read against this host's clock: the answer
		// carries no receive time of its own.
		w.RetryAfter = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		if resp.Request != nil {
			w.Verb = resp.Request.Method
		}
	}
	if credential {
		w.Status = http.StatusUnauthorized
	}
	return w
}

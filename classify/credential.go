package classify

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// ErrCredential marks an error of the host's credential source (an OAuth
// token source or flow that produced none): [Unauthorized].
var ErrCredential = errors.New("credentials unavailable")

// ResponseError is an error that carries the HTTP answer it was made from
// (a host's credential round-tripper's 401 it could not fix); it classifies
// by that answer, not as [Transport]. *oauth2.RetrieveError is read alike.
type ResponseError interface {
	error
	HTTPResponse() *http.Response
}

// answerOf returns the HTTP facts of an error that carries an answer, else
// nil. A token endpoint's refusal (RFC 6749 section 5.2) is a 401.
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
		w.WWWAuthenticate = strings.Join(resp.Header.Values("WWW-Authenticate"), ", ") // every field line: one list (RFC 9110 section 5.3)
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

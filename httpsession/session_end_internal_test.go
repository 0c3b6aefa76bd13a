package httpsession

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
)

// An answer that said the session is gone (here the standalone stream's
// 404 on a request that carried the session id) is the session's cause,
// even when session.Verify fails the session with its own liveness
// request's error before go-sdk has closed the connection: the first cause
// wins, on every route (DESIGN.md section 2, "first cause wins").
func TestFailAfterASessionGoneAnswerKeepsTheAnswer(t *testing.T) {
	s := &Session{}
	gone := Exchange{Verb: http.MethodGet, Status: http.StatusNotFound, SessionIDSent: true}
	require.True(t, sessionGone(gone))
	s.record(&endingAnswer{gone})

	require.True(t, s.Fail(errors.New("calling \"ping\": client is closing")))
	require.Equal(t, classify.SessionExpired, classify.Error(s.Err()).Class)

	var he *classify.HTTPError
	require.ErrorAs(t, s.Err(), &he)
	require.Equal(t, http.StatusNotFound, he.Exchange.Status)
}

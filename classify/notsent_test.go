package classify_test

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"

	"github.com/mcpsup/mcpsup/classify"
)

// TestNotSentIsAWeakTransportFact: a request go-sdk failed unsent is
// transport when nothing else in the error decides, and yields to what
// does; a done caller's context makes it canceled. Its text is go-sdk's.
func TestNotSentIsAWeakTransportFact(t *testing.T) {
	stored := errors.New("calling \"tools/call\": connection failed earlier")
	live := context.Background()
	done, cancel := context.WithCancel(live)
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		err  error
		want classify.Class
	}{
		{"alone", live, &classify.NotSentError{Err: stored}, classify.Transport},
		{"without it", live, stored, classify.Unknown},
		{"a JSON-RPC error decides", live, &classify.NotSentError{Err: &jsonrpc.Error{Code: -32601, Message: "no"}}, classify.MethodNotFound},
		{"a deadline decides", live, &classify.NotSentError{Err: context.DeadlineExceeded}, classify.Timeout},
		{"an HTTP answer decides", live, errors.Join(&classify.NotSentError{Err: stored},
			&classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Status: 403}}), classify.Forbidden},
		{"the caller's context ended", done, &classify.NotSentError{Err: stored}, classify.Canceled},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, classify.Classify(c.ctx, c.err).Class, c.name)
	}
	assert.Equal(t, stored.Error(), (&classify.NotSentError{Err: stored}).Error())
	assert.ErrorIs(t, &classify.NotSentError{Err: stored}, stored)
}

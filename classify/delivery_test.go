package classify_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// TestDeliveryOf: wire facts say a request went out; a non-2xx status or a
// JSON-RPC error answering by id is an answer; a refused connection or an
// unsent request ran nothing; without facts only a JSON-RPC answer is known.
func TestDeliveryOf(t *testing.T) {
	sdk := errors.New("go-sdk's error")
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	byID := &jsonrpc.Error{Code: -32602, Message: "bad params"}
	x := func(status int, err error) error {
		return &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: status}, Err: err}
	}
	cases := []struct {
		name string
		err  error
		want classify.Delivery
	}{
		{"429", x(429, sdk), classify.DeliveryAnswered},
		{"500", fmt.Errorf("call: %w", x(500, sdk)), classify.DeliveryAnswered},
		{"JSON-RPC error in a 200", x(200, byID), classify.DeliveryAnswered},
		{"no answer, reset", x(0, io.ErrUnexpectedEOF), classify.DeliveryOutcomeUnknown},
		{"no answer, canceled", x(0, context.Canceled), classify.DeliveryOutcomeUnknown},
		{"no answer, refused", x(0, refused), classify.DeliveryNotSent},
		{"unsent", &classify.NotSentError{Err: sdk}, classify.DeliveryNotSent},
		{"no facts, JSON-RPC answer", byID, classify.DeliveryAnswered},
		{"no facts", sdk, classify.DeliveryNotKnown},
		{"no facts, refused", refused, classify.DeliveryNotKnown},
	}
	for _, c := range cases {
		v := classify.Classify(context.Background(), c.err)
		assert.Equal(t, c.want, classify.DeliveryOf(c.err, v), c.name)
	}
}

// The strings are the events package's delivery values.
func TestDeliveryStrings(t *testing.T) {
	assert.Equal(t, events.DeliveryNotSent, classify.DeliveryNotSent.String())
	assert.Equal(t, events.DeliveryOutcomeUnknown, classify.DeliveryOutcomeUnknown.String())
	assert.Equal(t, events.DeliveryAnswered, classify.DeliveryAnswered.String())
	assert.Equal(t, "not-known", classify.DeliveryNotKnown.String())
	assert.Equal(t, "delivery(9)", classify.Delivery(9).String())
}

// A 429 answered the request: the server saw it, and said no.
func ExampleDeliveryOf() {
	err := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 429, RetryAfter: 30 * time.Second}, Err: errors.New("rejected by transport")}
	fmt.Println(classify.DeliveryOf(err, classify.Classify(context.Background(), err)))
	// Output: answered
}

// TestWrittenRequestIsOutcomeUnknown: a request written to a stdio
// server that got no answer may have run; one answered by id was answered;
// one never written was not sent.
func TestWrittenRequestIsOutcomeUnknown(t *testing.T) {
	written := &classify.WrittenError{Err: io.EOF}
	assert.Equal(t, classify.DeliveryOutcomeUnknown, classify.DeliveryOf(written, classify.Error(written)))
	answered := &classify.WrittenError{Err: &jsonrpc.Error{Code: -32602, Message: "bad params"}}
	assert.Equal(t, classify.DeliveryAnswered, classify.DeliveryOf(answered, classify.Error(answered)))
	unsent := &classify.NotSentError{Err: io.EOF}
	assert.Equal(t, classify.DeliveryNotSent, classify.DeliveryOf(unsent, classify.Error(unsent)))
}

// cyclic is an error whose chain comes back to itself.
type cyclic struct{ next error }

func (c *cyclic) Error() string { return "cyclic" }
func (c *cyclic) Unwrap() error { return c.next }

// TestDeliveryOfHostileErrors: DeliveryOf reads an error with Classify's
// walk (failure story S3): a cycle ends, and a nil *HTTPError is no wire fact.
func TestDeliveryOfHostileErrors(t *testing.T) {
	a := &cyclic{}
	a.next = &cyclic{next: a}
	sent := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call"}, Err: a}
	assert.Equal(t, classify.DeliveryOutcomeUnknown, classify.DeliveryOf(sent, classify.Error(sent)))
	assert.Equal(t, classify.DeliveryNotKnown, classify.DeliveryOf(a, classify.Error(a)))
	nilFacts := fmt.Errorf("call: %w", (*classify.HTTPError)(nil))
	assert.Equal(t, classify.DeliveryNotKnown, classify.DeliveryOf(nilFacts, classify.Error(nilFacts)))
}

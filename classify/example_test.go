package classify_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/classify"
)

// A tools/call answered 429 with a plain-text body and Retry-After (failure
// story S4). go-sdk alone reports a bare -32005; the wire layer's HTTPError
// carries the status and Retry-After, so the verdict is rate-limited: no
// reconnect, retry after 30s.
func ExampleClassify() {
	sdkErr := errors.New(`calling "tools/call": rejected by transport: sending "tools/call": Too Many Requests`)
	err := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", Status: 429, ContentType: "text/plain", RetryAfter: 30 * time.Second, SessionIDSent: true, Body: "rate limit exceeded"}, Err: sdkErr}
	v := classify.Classify(context.Background(), fmt.Errorf("search: %w", err))
	fmt.Println(v)
	fmt.Println("reconnect:", v.Reconnects())
	fmt.Println("retry:", v.Retries())
	// Output:
	// rate-limited (HTTP 429, retry after 30s, tools/call)
	// reconnect: false
	// retry: true
}

// The two policies of DESIGN.md section 3 for every class.
func ExampleClass_Reconnects() {
	for _, c := range classify.Classes() {
		fmt.Printf("%-16s reconnects=%-5v retries=%v\n", c, c.Reconnects(), c.Retries())
	}
	// Output:
	// canceled         reconnects=false retries=false
	// unauthorized     reconnects=false retries=false
	// method-not-found reconnects=false retries=true
	// session-expired  reconnects=true  retries=true
	// rate-limited     reconnects=false retries=true
	// forbidden        reconnects=false retries=true
	// server-error     reconnects=false retries=true
	// application      reconnects=false retries=true
	// protocol         reconnects=false retries=true
	// timeout          reconnects=false retries=true
	// transport        reconnects=true  retries=true
	// unknown          reconnects=false retries=true
}

// S2: a stale session rejected the way the TypeScript SDK server does. The
// body's JSON-RPC error has a null id; with the request's session id it means
// session-expired.
func ExampleParseRPCError() {
	body := []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`)
	r, _ := classify.ParseRPCError(body)
	err := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/list", Status: 400, SessionIDSent: true, RPC: r.RPCError, BodyRPCID: r.ID, Body: string(body)}}
	fmt.Println(classify.Classify(context.Background(), err).Class)
	// Output:
	// session-expired
}

// The wire layer asks SessionGone whether an answer ended the session; the
// verdict follows the same rule.
func ExampleHTTPError_SessionGone() {
	gone := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", RequestID: "3", Status: 404, SessionIDSent: true}}
	answered := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/call", RequestID: "3", Status: 404, SessionIDSent: true, RPC: classify.RPCError{Present: true, Code: -32602, Message: "Invalid params", HasID: true}, BodyRPCID: "3"}}
	fmt.Println(gone.SessionGone(), classify.Classify(context.Background(), gone).Class)
	fmt.Println(answered.SessionGone(), classify.Classify(context.Background(), answered).Class)
	// Output:
	// true session-expired
	// false application
}

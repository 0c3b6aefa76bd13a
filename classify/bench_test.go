package classify

import (
	"context"
	"errors"
	"testing"
)

var sink Verdict

// BenchmarkClassifyWrappedSDKError: the chain go-sdk v1.8.0 builds for a 400
// with a JSON-RPC -32601 body (S1), wrapped in the wire layer's HTTPError.
func BenchmarkClassifyWrappedSDKError(b *testing.B) {
	err := wire(400, true, s1Body, sdkRPCChain("resources/templates/list", -32601, "Method not found", "Bad Request"))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sink = Classify(ctx, err)
	}
	if sink.Class != MethodNotFound {
		b.Fatal(sink)
	}
}

// BenchmarkClassifyRejected: go-sdk's bare -32005 for a 429, no wire facts.
func BenchmarkClassifyRejected(b *testing.B) {
	err := sdkRejectedChain("tools/call", "Too Many Requests")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sink = Classify(ctx, err)
	}
	if sink.Class != ServerError {
		b.Fatal(sink)
	}
}

// BenchmarkClassifyCycle: S3's two-node cycle joined with a third path.
func BenchmarkClassifyCycle(b *testing.B) {
	a := &node{msg: "a"}
	n := &node{msg: "b", next: a}
	a.next = n
	err := error(&fan{msg: "cycle", kids: []error{a, errors.Join(n, a)}})
	b.ReportAllocs()
	for b.Loop() {
		sink = Classify(noCaller, err)
	}
	if sink.Class != Unknown {
		b.Fatal(sink)
	}
}

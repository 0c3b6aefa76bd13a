package msgcheck

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A list result whose ttlMs go-sdk decodes is left as it is, at one
// allocation: the hint go-sdk's decoder is handed.
func TestTTLHintCommonPathAllocatesNothing(t *testing.T) {
	r := &jsonrpc.Response{Result: []byte(`{"tools":[{"name":"a","description":"line\nbreak","inputSchema":{"type":"object"}}],"ttlMs":30000}`)}
	if n := testing.AllocsPerRun(100, func() {
		if tameTTLHint("tools/list", r) {
			t.Fatal("rebuilt")
		}
	}); n > 1 {
		t.Fatalf("%v allocations", n)
	}
}

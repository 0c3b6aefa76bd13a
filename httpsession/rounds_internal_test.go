package httpsession

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rounds a conn keeps are bounded (maxLostRounds, the oldest dropped
// first), one per call (the latest), and taken once, by the first round of
// the same call alone: another tool, or other arguments, is another call.
func TestRoundsKeepTheLatestRoundOfEachCallWithinTheBound(t *testing.T) {
	lost := func(rs *rounds, id int64, params string) {
		r := &jsonrpc.Request{ID: mustID(t, id), Method: "tools/call", Params: json.RawMessage(params)}
		_, deliver := rs.resume(r, func(jsonrpc.Message) {})
		deliver(errorMessage(r.ID, Exchange{}, "stream lost"))
	}
	first := func(rs *rounds, params string) string {
		p, _ := rs.resume(&jsonrpc.Request{ID: mustID(t, 99), Method: "tools/call", Params: json.RawMessage(params)}, nil)
		return string(p)
	}
	var rs rounds
	lost(&rs, 1, `{"name":"a","arguments":{},"requestState":"s1"}`)
	lost(&rs, 2, `{"name":"a","arguments":{},"requestState":"s2","inputResponses":{"q":{}}}`)
	assert.Equal(t, `{"name":"b","arguments":{}}`, first(&rs, `{"name":"b","arguments":{}}`), "another tool")
	assert.Equal(t, `{"name":"a","arguments":{"x":1}}`, first(&rs, `{"name":"a","arguments":{"x":1}}`), "other arguments")
	assert.Equal(t, `{"name":"a","arguments":{},"requestState":"s2","inputResponses":{"q":{}}}`, first(&rs, `{"arguments":{},"name":"a"}`), "the latest round")
	assert.Equal(t, `{"name":"a","arguments":{}}`, first(&rs, `{"name":"a","arguments":{}}`), "taken once")

	for i := range maxLostRounds + 1 {
		lost(&rs, int64(i), fmt.Sprintf(`{"name":"t%d","requestState":"s"}`, i))
	}
	require.Equal(t, maxLostRounds, rs.lost.len())
	assert.Equal(t, `{"name":"t0"}`, first(&rs, `{"name":"t0"}`), "the oldest was dropped")
	assert.Equal(t, `{"name":"t1","requestState":"s"}`, first(&rs, `{"name":"t1"}`))
}

func mustID(t *testing.T, n int64) jsonrpc.ID {
	id, err := jsonrpc.MakeID(float64(n))
	require.NoError(t, err)
	return id
}

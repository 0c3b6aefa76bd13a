package httpsession

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// BenchmarkRequestIdentity measures reading the JSON-RPC id and method of a
// typical tools/call POST.
func BenchmarkRequestIdentity(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"},"_meta":{"progressToken":7}}}`)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1/", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if m, id := requestIdentity(req); m != "tools/call" || id != "7" {
			b.Fatal(m, id)
		}
	}
}

func TestRequestIdentity(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"pad":"` + strings.Repeat("x", maxIdentityBody) + `"}}`
	cases := []struct {
		name, body     string
		unknownLength  bool
		method, wantID string
	}{
		{"call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`, false, "tools/call", "7"},
		{"string id", `{"jsonrpc":"2.0","id":"a-1","method":"tools/list"}`, false, "tools/list", `"a-1"`},
		{"method first", ` {"method":"ping","params":{},"id":0}`, false, "ping", "0"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"x"}`, false, "x", ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, false, "notifications/initialized", ""},
		{"response: no request id", `{"jsonrpc":"2.0","id":3,"result":{}}`, false, "", ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, false, "", ""},
		{"batch after space", "\n [{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", false, "", ""},
		{"not JSON", `hello`, false, "", ""},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"pi`, false, "", ""},
		{"unknown length", `{"jsonrpc":"2.0","id":9,"method":"tools/call"}`, true, "tools/call", "9"},
		{"longer than the unmarshal bound", long, false, "tools/call", `"big"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(c.body)
			if c.unknownLength {
				body = io.MultiReader(body) // no length known to net/http
			}
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1/", body)
			require.NoError(t, err)
			if c.unknownLength {
				b := []byte(c.body)
				req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
				require.EqualValues(t, 0, req.ContentLength)
			}
			method, id := requestIdentity(req)
			assert.Equal(t, c.method, method)
			assert.Equal(t, c.wantID, id)
		})
	}
}

// TestRequestIdentityAllocations: reading the identity of a typical call is
// one small decode, not a token scan (which costs about 48 allocations).
func TestRequestIdentityAllocations(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"},"_meta":{"progressToken":7}}}`)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1/", bytes.NewReader(body))
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() { requestIdentity(req) })
	assert.LessOrEqual(t, allocs, 16.0)
}

// Every request go-sdk encodes takes the fast path, and wherever both read
// an identity they read the same one: on go-sdk's own encodings of random
// requests, and on those cut or changed at any byte. (The fast path checks
// no syntax inside the params: a body broken there, which go-sdk never
// writes, keeps its identity, and its server refuses it.)
func TestGoSDKIdentityIsTheDecoders(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.Int64().Draw(t, "id")
		method := rapid.StringMatching(`[a-zA-Z/_.\-"\\ é]{0,24}`).Draw(t, "method")
		var params json.RawMessage
		if rapid.Bool().Draw(t, "params") {
			params = json.RawMessage(rapid.SampledFrom([]string{`{}`, `{"name":"x","arguments":{"id":"y"}}`, `{"method":"other","id":9}`, `[1,2]`}).Draw(t, "p"))
		}
		rid, err := jsonrpc.MakeID(float64(id))
		if err != nil {
			t.Skip()
		}
		body, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: rid, Method: method, Params: params})
		require.NoError(t, err)
		m, raw, ok := goSDKIdentity(body)
		var sc identityScratch
		wm, wraw, wok := sc.parse(body)
		require.True(t, wok, "%s", body)
		if !strings.ContainsAny(method, `"\`) && method != "" {
			require.True(t, ok, "go-sdk's encoding takes the fast path: %s", body)
		}
		if ok {
			require.Equal(t, string(wm), string(m), "%s", body)
			require.Equal(t, rawID(wraw), rawID(raw), "%s", body)
		}
		// Cut or changed anywhere: the fast path agrees with the decoder
		// or leaves the body to it.
		i := rapid.IntRange(0, len(body)-1).Draw(t, "at")
		// Or with a key or a value after its end, valid JSON or not.
		tail := rapid.SampledFrom([]string{`,"id":2}`, `,"method":"other"}`, `,"id":null}`, `,"params":{}}`, `} `, `}{}`, `}]`, `,}`}).Draw(t, "tail")
		appended := append(bytes.Clone(body[:len(body)-1]), tail...)
		for _, changed := range [][]byte{body[:i], append(append(bytes.Clone(body[:i]), rapid.Byte().Draw(t, "b")), body[i+1:]...), appended} {
			m, raw, ok := goSDKIdentity(changed)
			if !ok {
				continue
			}
			wm, wraw, wok := sc.parse(changed)
			if !wok {
				continue
			}
			require.Equal(t, string(wm), string(m), "%s", changed)
			require.Equal(t, rawID(wraw), rawID(raw), "%s", changed)
		}
	})
}

// A body that starts as go-sdk writes one but holds a second "id" or
// "method" after its params, or a second value after its object, has the
// identity go-sdk's server reads in it: the last of two keys (segmentio's
// decoder), the first value alone (mcp readBatch decodes no further). The
// fast read must not name another call than the server answers.
func TestGoSDKIdentityIsTheServersReading(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"id":2}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"}"},"id":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\"}","b":[{}]},"id":"s"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}{"id":2}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping","params":{}} trailing`,
	} {
		t.Run(body, func(t *testing.T) {
			msg, err := jsonrpc.DecodeMessage([]byte(body))
			require.NoError(t, err, "go-sdk's server reads it")
			r := msg.(*jsonrpc.Request)
			wantID := ""
			if r.ID.IsValid() {
				b, err := json.Marshal(r.ID.Raw())
				require.NoError(t, err)
				wantID = string(b)
			}
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1/", strings.NewReader(body))
			require.NoError(t, err)
			method, id := requestIdentity(req)
			assert.Equal(t, r.Method, method)
			assert.Equal(t, wantID, id)
		})
	}
}

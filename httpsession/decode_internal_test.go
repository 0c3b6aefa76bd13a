package httpsession

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeSeeds are well-formed and hostile message bytes: trailing garbage,
// nesting past go-sdk's depth bound (in the message and after it), keys in
// another case, duplicate keys, odd ids, empty and null methods, batches,
// bad UTF-8, escapes, line breaks and whitespace JSON does not allow.
var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"x"}]}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no","data":{"a":[1]}}}`,
	`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	`{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}} trailing garbage`,
	`{"jsonrpc":"2.0","id":1,"result":{}}{"jsonrpc":"2.0","id":2,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}` + strings.Repeat("[", maxJSONDepth+1),
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("[", maxJSONDepth+1) + `"}`,
	`{"JSONRPC":"2.0","ID":1,"Result":{}}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e400,"result":{}}`,
	`{"jsonrpc":"2.0","id":true,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":[1],"result":{}}`,
	`{"jsonrpc":"2.0","id":01,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":{"a":1}}`,
	`{"jsonrpc":"2.0","id":1,"method":"a\u0000b"}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"error":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`,
	`{"jsonrpc":2,"id":1,"result":{}}`,
	`{"jsonrpc":"2.0"}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	"\ufeff{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"result\":{}}",
	`{"jsonrpc":"2.0","id":"\ud800","result":{}}`,
	"{\"jsonrpc\":\"2.0\",\n\"id\":1,\r\"result\":{}}",
	"\t {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}} \t",
	"\f{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\f",
	`{"jsonrpc":"2.0","id":1,"result":{"a":"\"}\\"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}`,
	`{"jsonrpc":"2.0","id":1,"result":{},}`,
	``, ` `, `null`, `{}`, `"x"`, `{"jsonrpc":"2.0","id":1,"result":{}}}`,
}

// sameMessage says how a and b differ, or returns "".
func sameMessage(a, b jsonrpc.Message) string {
	switch a := a.(type) {
	case *jsonrpc.Request:
		b, ok := b.(*jsonrpc.Request)
		switch {
		case !ok:
			return "kind"
		case a.ID != b.ID:
			return "id"
		case a.Method != b.Method:
			return "method"
		case !sameRaw(a.Params, b.Params):
			return "params"
		}
	case *jsonrpc.Response:
		b, ok := b.(*jsonrpc.Response)
		switch {
		case !ok:
			return "kind"
		case a.ID != b.ID:
			return "id"
		case !sameRaw(a.Result, b.Result):
			return "result"
		case (a.Error == nil) != (b.Error == nil):
			return "error presence"
		case a.Error != nil:
			var ea, eb *jsonrpc.Error
			if !errors.As(a.Error, &ea) || !errors.As(b.Error, &eb) {
				return "error type"
			}
			if ea.Code != eb.Code || ea.Message != eb.Message || !sameRaw(ea.Data, eb.Data) {
				return "error"
			}
		}
	default:
		return "unknown kind"
	}
	return ""
}

// sameRaw reports whether two raw JSON values are the same but for the
// whitespace between tokens, which go-sdk's own encoder drops from a
// message's raw values when it writes one anew (a value with a line break
// is re-encoded).
func sameRaw(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// checkDecode holds decodeMessage to go-sdk's jsonrpc.DecodeMessage on data:
// both refuse it or both return the same message.
func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := jsonrpc.DecodeMessage(data)
	got, err := decodeMessage(data)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: decodeMessage error %v, go-sdk error %v", data, err, wantErr)
	}
	if err != nil {
		return
	}
	if d := sameMessage(want, got); d != "" {
		t.Fatalf("%q: %s differs from go-sdk's decode", data, d)
	}
}

// TestDecodeMessageIsGoSDKs: on every seed, decodeMessage accepts and
// returns exactly what go-sdk's decoder does.
func TestDecodeMessageIsGoSDKs(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecode(t, []byte(s))
	}
}

// FuzzDecodeMessage holds decodeMessage to go-sdk's jsonrpc.DecodeMessage on
// arbitrary bytes.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecode)
}

// BenchmarkDecodeMessage compares decodeMessage with go-sdk's
// jsonrpc.DecodeMessage on a tools/call response.
func BenchmarkDecodeMessage(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"x"}]}}`)
	b.Run("go-sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeMessage(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package httpsession

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// A response carrying the call's plain integer id is matched by value: one
// spelling the same number otherwise (go-sdk reads 300.0 as 300) is matched
// too, and one with another id is not. Written anew, the response carries
// the call's id.
func TestCallIDMatchesByValue(t *testing.T) {
	id, _ := jsonrpc.MakeID(float64(300))
	want := callIDOf(id, 0)
	for _, c := range []struct {
		body    string
		problem bool
	}{
		{`{"jsonrpc":"2.0","id":300,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":300.0,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":3e2,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":301,"result":{}}`, true},
		{`{"jsonrpc":"2.0","id":"300","result":{}}`, true},
	} {
		msg, err := decodeMessageFor([]byte(c.body), want)
		require.NoError(t, err, c.body)
		assert.Equal(t, c.problem, answerProblem(msg.(*jsonrpc.Response), want) != "", c.body)
	}

	msg, err := decodeMessageFor([]byte("{\"jsonrpc\":\"2.0\",\n\"id\":300,\"result\":{}}"), want)
	require.NoError(t, err)
	assert.True(t, want.answeredBy(msg.(*jsonrpc.Response)), "whitespace before the id changes nothing")
}

// A server-to-client request that happens to carry the call's id keeps it:
// the zero ID stands for the call's in a response only.
func TestCallIDRequestKeepsItsID(t *testing.T) {
	id, _ := jsonrpc.MakeID(float64(7))
	want := callIDOf(id, 0)
	msg, err := decodeMessageFor([]byte(`{"jsonrpc":"2.0","id":7,"method":"roots/list"}`), want)
	require.NoError(t, err)
	req := msg.(*jsonrpc.Request)
	assert.True(t, req.IsCall(), "still a request, not a notification")
	assert.Equal(t, want.ID(), req.ID)
}

// byteScanDepth is go-sdk's depth check as it is written (internal/json
// checkMaxDepth): one byte at a time, the reference checkMaxDepth must
// agree with.
func byteScanDepth(data []byte) error {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxJSONDepth {
				return errMaxDepth
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// TestCheckMaxDepthAgreesWithTheByteScan: skipping strings by their closing
// quote gives go-sdk's byte-by-byte verdict on any bytes, escapes, runs of
// backslashes and unterminated strings included, at the bound and past it.
func TestCheckMaxDepthAgreesWithTheByteScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		parts := rapid.SliceOf(rapid.SampledFrom([]string{
			`"`, `\`, `\\`, `\"`, `{`, `}`, `[`, `]`, `a`, `"x"`, `\\\"`,
			strings.Repeat("[", maxJSONDepth), strings.Repeat("{", maxJSONDepth/2),
		})).Draw(t, "parts")
		data := []byte(strings.Join(parts, ""))
		if got, want := checkMaxDepth(data), byteScanDepth(data); got != want {
			t.Fatalf("%q: got %v, want %v", data, got, want)
		}
	})
	for _, s := range decodeSeeds {
		assert.Equal(t, byteScanDepth([]byte(s)), checkMaxDepth([]byte(s)), "%q", s)
	}
}

// sseBase answers every POST with a 200 text/event-stream of body.
type sseBase struct{ body string }

func (b sseBase) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body:   io.NopCloser(strings.NewReader(b.body)), ContentLength: -1, Request: req}, nil
}

// answerFor returns what go-sdk reads for a tools/call with id 7
// answered with the event stream body, each message encoded again.
func answerFor(t *testing.T, body string) []string {
	t.Helper()
	msgs, _ := callThrough(t, testConn(t, Config{Base: sseBase{body: body}}, "http://127.0.0.1/"))
	var got []string
	for _, m := range msgs {
		b, err := jsonrpc.EncodeMessage(m)
		require.NoError(t, err)
		got = append(got, string(b))
	}
	return got
}

// Events longer than the stream's read buffer are handed on whole: a long
// data line, a long first line joined with a second one, CRLF line ends,
// and a long notification before the response.
func TestAnswerStreamLongEvents(t *testing.T) {
	text := strings.Repeat("x", 3*readBufferSize)
	response := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + text + `"}}`

	assert.Equal(t, []string{response}, answerFor(t, "event: message\ndata: "+response+"\n\n"))
	assert.Equal(t, []string{response}, answerFor(t, "data: "+response+"\r\n\r\n"))
	assert.Equal(t, []string{note, response}, answerFor(t, "data: "+note+"\n\ndata: "+response+"\n\n"))

	split := strings.TrimSuffix(response, "}}")
	got := answerFor(t, "data: "+split+"\ndata: }}\n\n")
	require.Len(t, got, 1)
	msg, err := jsonrpc.DecodeMessage([]byte(got[0]))
	require.NoError(t, err)
	r := msg.(*jsonrpc.Response)
	assert.Equal(t, want7(t), r.ID)
	assert.Contains(t, string(r.Result), text)
}

func want7(t *testing.T) jsonrpc.ID {
	id, err := jsonrpc.MakeID(float64(7))
	require.NoError(t, err)
	return id
}

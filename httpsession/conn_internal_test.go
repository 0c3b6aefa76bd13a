package httpsession

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/require"
)

// testConn is a conn on cfg to endpoint, closed when the test ends.
func testConn(t testing.TB, cfg Config, endpoint string) *conn {
	c := wireConn(cfg, endpoint, nil)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// wireConn is a conn on cfg, defaults applied, with a private StreamOn
// switch unless cfg has one.
func wireConn(cfg Config, endpoint string, h *handshake) *conn {
	cfg = cfg.withDefaults(nil)
	cfg.Switch = cmp.Or(cfg.Switch, NewStreamSwitch(SwitchConfig{Mode: StreamOn, Clock: cfg.Clock}))
	return newConn(&cfg, endpoint, h, false)
}

// writeRaw hands the message body to c as go-sdk would, with ctx.
func writeRaw(t testing.TB, c *conn, ctx context.Context, body string) {
	t.Helper()
	msg, err := jsonrpc.DecodeMessage([]byte(body))
	require.NoError(t, err)
	require.NoError(t, c.Write(ctx, msg))
}

// readUntilResponse returns what Read delivers up to and including the
// first response.
func readUntilResponse(t testing.TB, c *conn) []jsonrpc.Message {
	t.Helper()
	var got []jsonrpc.Message
	for {
		msg, err := c.Read(context.Background())
		require.NoError(t, err)
		got = append(got, msg)
		if _, ok := msg.(*jsonrpc.Response); ok {
			return got
		}
	}
}

// callThrough sends a call with id 7 on c and returns the
// messages go-sdk reads for it, the response last, and the call's context
// (from WithExchange: [AfterAnswers] tells when its answer stream closed).
func callThrough(t testing.TB, c *conn) ([]jsonrpc.Message, context.Context) {
	t.Helper()
	ctx := WithExchange(context.Background())
	writeRaw(t, c, ctx, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`)
	return readUntilResponse(t, c), ctx
}

// cannedAnswer answers every request with a 200 of body: an event stream,
// or with json an application/json body.
type cannedAnswer struct {
	body string
	json bool
}

func (c cannedAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	ct, n := "text/event-stream", int64(-1)
	if c.json {
		ct, n = "application/json", int64(len(c.body))
	}
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(c.body)),
		ContentLength: n, Request: req}, nil
}

// BenchmarkConnAnswer measures the conn's own work for one tools/call, with
// no network: encoding the request, reading and checking the answer (an
// event stream's one event, or a JSON body) and handing go-sdk the
// response; text is the size of the result's text content.
func BenchmarkConnAnswer(b *testing.B) {
	call, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`))
	require.NoError(b, err)
	for _, c := range []struct {
		size int
		json bool
	}{{16, false}, {64 << 10, false}, {16, true}, {64 << 10, true}} {
		kind := "sse"
		if c.json {
			kind = "json"
		}
		b.Run(fmt.Sprintf("%s/text=%d", kind, c.size), func(b *testing.B) {
			result := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":%q}]}}`, strings.Repeat("x", c.size))
			answer := cannedAnswer{body: "event: message\ndata: " + result + "\n\n"}
			if c.json {
				answer = cannedAnswer{body: result, json: true}
			}
			cn := testConn(b, Config{Base: answer}, "http://127.0.0.1/")
			b.SetBytes(int64(len(result)))
			b.ReportAllocs()
			for b.Loop() {
				if err := cn.Write(context.Background(), call); err != nil {
					b.Fatal(err)
				}
				if _, err := cn.Read(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

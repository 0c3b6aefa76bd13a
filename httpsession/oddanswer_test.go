package httpsession_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
)

// An answer whose id is written oddly, or which carries more than one
// message, either gives the call its own result or fails the call alone
// with a protocol verdict; it never hangs the call, hands it another
// result, or costs the session.
func TestOddAnswersFailTheCallAlone(t *testing.T) {
	const mine = `{"content":[{"type":"text","text":"mine"}]}`
	const other = `{"content":[{"type":"text","text":"other"}]}`
	resp := func(id, result string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}` }
	event := func(data string) string { return "data: " + data + "\n\n" }
	cases := []struct {
		name   string
		ct     string
		gz     bool
		body   string
		result bool // the call gets mine; else it fails with a protocol verdict
	}{
		{"plain", "application/json", false, resp("$ID", mine), true},
		{"float id", "application/json", false, resp("$ID.0", mine), true},
		{"exponent id", "application/json", false, resp("$IDe0", mine), true},
		{"fraction id", "application/json", false, resp("$ID.5", other), false},
		{"string id", "application/json", false, resp(`"$ID"`, other), false},
		{"escaped string id", "application/json", false, resp(`"\u0033"`, other), false},
		{"leading zero id", "application/json", false, resp("0$ID", other), false},
		{"negative id", "application/json", false, resp("-$ID", other), false},
		{"huge id", "application/json", false, resp("$ID00000000000000000000", other), false},
		{"zero id", "application/json", false, resp("0", other), false},
		{"null id", "application/json", false, resp("null", other), false},
		{"no id", "application/json", false, `{"jsonrpc":"2.0","result":` + other + `}`, false},
		{"id key in another case", "application/json", false, `{"jsonrpc":"2.0","ID":$ID,"result":` + other + `}`, false},
		{"duplicate id, own last", "application/json", false, `{"jsonrpc":"2.0","id":999,"id":$ID,"result":` + mine + `}`, true},
		{"duplicate id, own first", "application/json", false, `{"jsonrpc":"2.0","id":$ID,"id":999,"result":` + other + `}`, false},
		{"duplicate result", "application/json", false, `{"jsonrpc":"2.0","id":$ID,"result":` + other + `,"result":` + mine + `}`, true},
		{"line breaks", "application/json", false, "{\"jsonrpc\":\"2.0\",\r\n\"id\":$ID,\n\"result\":" + mine + "}", true},
		{"gzip", "application/json", true, resp("$ID", mine), true},
		{"two messages, the first one taken", "application/json", false, resp("$ID", mine) + resp("$ID", other), true},
		{"truncated", "application/json", false, resp("$ID", mine)[:30], false},
		{"event, float id", "text/event-stream", false, event(resp("$ID.0", mine)), true},
		{"event, string id", "text/event-stream", false, event(resp(`"$ID"`, other)), false},
		{"event, another call's answer first", "text/event-stream", false, event(resp("999", other)) + event(resp("$ID", mine)), false},
		{"event, two answers", "text/event-stream", false, event(resp("$ID", mine)) + event(resp("$ID", other)), true},
		{"event, a request with the call's id first", "text/event-stream", false,
			event(`{"jsonrpc":"2.0","id":$ID,"method":"ping"}`) + event(resp("$ID", mine)), true},
		{"event, multi-line data", "text/event-stream", false, "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":$ID,\ndata: \"result\":" + mine + "}\n\n", true},
		{"event, CRLF framing and gzip", "text/event-stream", true, "data: " + resp("$ID", mine) + "\r\n\r\n", true},
		{"event, another event type", "text/event-stream", false, "event: other\n" + event(resp("$ID", other)), false},
		{"event, no space after the colon", "text/event-stream", false, "data:" + resp("$ID", mine) + "\n\n", true},
		// WHATWG HTML, server-sent events: "Lines must be separated by either
		// a U+000D CARRIAGE RETURN U+000A LINE FEED (CRLF) character pair, a
		// single U+000A LINE FEED (LF) character, or a single U+000D
		// CARRIAGE RETURN (CR) character."
		{"event, CR line ends", "text/event-stream", false, "data: " + resp("$ID", mine) + "\r\r", true},
		{"event, CR line ends after a comment", "text/event-stream", false, ": hello\rdata: " + resp("$ID", mine) + "\r\r", true},
		{"event, trailing bytes after the message", "text/event-stream", false, event(resp("$ID", mine) + " x"), true},
		{"event, a fraction id", "text/event-stream", false, event(resp("$ID.5", other)), false},
		{"event, an answer cut by the stream's end", "text/event-stream", false, event(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`) + "data: " + resp("$ID", other), false},
		{"event, truncated", "text/event-stream", false, "data: " + resp("$ID", mine)[:30], false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := &fakeServer{answer: fuzzAnswer{status: 200, contentType: c.ct, gzip: c.gz, body: []byte(c.body)}}
			clock := clockwork.NewFakeClock()
			advance(t, clock)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sess := openFaked(t, ctx, srv, httpsession.Config{Clock: clock})
			defer sess.Close()
			cs := sess.ClientSession()
			callCtx := httpsession.WithExchange(ctx)
			res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "t"})
			if ctx.Err() != nil {
				t.Fatalf("the call hung: %v", err)
			}
			if c.result {
				if err != nil {
					t.Fatalf("want the call's own result, got %v", err)
				}
				if text := res.Content[0].(*mcp.TextContent).Text; text != "mine" {
					t.Fatalf("the call got %q", text)
				}
			} else {
				if err == nil {
					t.Fatalf("want a failed call, got %+v", res.Content[0])
				}
				if v := classify.Classify(context.Background(), httpsession.Annotate(callCtx, err)); v.Class != classify.Protocol {
					t.Fatalf("verdict %s, want protocol: %v", v.Class, err)
				}
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t"}); err != nil {
				t.Fatalf("the session was lost: %v", err)
			}
		})
	}
}

// A 2xx answer that is neither application/json nor text/event-stream
// (streamable-http.mdx: "the server MUST either return Content-Type:
// text/event-stream ... or Content-Type: application/json") fails the call
// alone, and its typed facts name what was wrong, as every other refusal's
// do: Exchange.Problem names the content type, none included.
func TestWrongContentTypeIsNamedInTheExchange(t *testing.T) {
	for _, ct := range []string{"text/plain", ""} {
		t.Run("content type "+ct, func(t *testing.T) {
			srv := &fakeServer{answer: fuzzAnswer{status: 200, contentType: ct, body: []byte(`{"jsonrpc":"2.0","id":$ID,"result":{}}`)}}
			clock := clockwork.NewFakeClock()
			advance(t, clock)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sess := openFaked(t, ctx, srv, httpsession.Config{Clock: clock})
			defer sess.Close()
			callCtx := httpsession.WithExchange(ctx)
			_, err := sess.ClientSession().CallTool(callCtx, &mcp.CallToolParams{Name: "t"})
			if err == nil {
				t.Fatal("want the call refused")
			}
			x, ok := httpsession.LastExchange(callCtx)
			if !ok {
				t.Fatal("no exchange recorded")
			}
			want := ct
			if want == "" {
				want = "none"
			}
			if !strings.Contains(x.Problem, `content type "`+want+`"`) {
				t.Fatalf("Exchange.Problem = %q, want it to name the content type %q", x.Problem, want)
			}
		})
	}
}

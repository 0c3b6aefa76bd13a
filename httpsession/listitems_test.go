package httpsession_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
)

// TestListPageOverTheItemBoundIsRefusedUndecoded: go-sdk decodes every item
// of a list page into a struct of its own (a 16 MiB page of `{}` tools made
// 5.6 million mcp.Tool, some 870 MiB, before the pagination's item limit
// was checked). A page with more items than MaxListItems, as one JSON body
// or as an event of a stream, is refused before go-sdk sees it: the list
// fails alone with a protocol verdict naming the bound, and the session
// lives. A page at the bound is served.
func TestListPageOverTheItemBoundIsRefusedUndecoded(t *testing.T) {
	const bound = 100
	tool := `{"name":"t","inputSchema":{"type":"object"}}`
	page := func(n int) string {
		return `{"jsonrpc":"2.0","id":$ID,"result":{"tools":[` + strings.TrimSuffix(strings.Repeat(tool+",", n), ",") + `]}}`
	}
	for _, c := range []struct {
		name   string
		action mcptest.Action
		fails  bool
	}{
		{"JSON at the bound", mcptest.JSONBody(page(bound)), false},
		{"JSON past the bound", mcptest.JSONBody(page(bound + 1)), true},
		{"event stream past the bound", mcptest.SSE(mcptest.SSEMessage(page(bound + 1))...), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHostile(t, mcptest.Stateful2025, httpsession.Config{MaxListItems: bound})
			h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/list"}, Action: c.action})
			ctx, cancel := context.WithTimeout(httpsession.WithExchange(context.Background()), 20*time.Second)
			defer cancel()
			res, err := h.sess.ClientSession().ListTools(ctx, nil)
			if !c.fails {
				require.NoError(t, err)
				require.Len(t, res.Tools, bound)
				h.requireAlive(t)
				return
			}
			require.Error(t, err)
			err = httpsession.Annotate(ctx, err)
			v := classify.Classify(context.Background(), err)
			assert.Equal(t, classify.Protocol, v.Class)
			var he *classify.HTTPError
			require.True(t, errors.As(err, &he), "the list's exchange: %v", err)
			x := he.Exchange
			assert.True(t, x.Malformed && x.Oversized, "%+v", x)
			assert.Equal(t, "tools/list result with more than 100 tools", x.Problem)
			h.requireAlive(t)
		})
	}
}

// TestMessageOverTheValueBoundIsRefusedUndecoded: go-sdk decodes a message
// into structs, maps and interfaces of some 100 bytes a JSON value at worst
// (16 MiB of `{}` in a result's structuredContent cost some 560 MiB). A
// message with more values than MaxJSONValues, a call's response as a JSON
// body or an event, or a request of the server's on the call's stream, is
// refused before go-sdk sees it: the call fails alone with a protocol
// verdict naming the bound, and the session lives.
func TestMessageOverTheValueBoundIsRefusedUndecoded(t *testing.T) {
	const bound = 1000
	values := strings.TrimSuffix(strings.Repeat("{},", bound), ",")
	result := `{"jsonrpc":"2.0","id":$ID,"result":{"content":[],"structuredContent":{"rows":[` + values + `]}}}`
	within := `{"jsonrpc":"2.0","id":$ID,"result":{"content":[],"structuredContent":{"rows":[{}]}}}`
	sampling := `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"maxTokens":1,"messages":[` + values + `]}}`
	for _, c := range []struct {
		name   string
		action mcptest.Action
		fails  bool
	}{
		{"JSON within the bound", mcptest.JSONBody(within), false},
		{"JSON past the bound", mcptest.JSONBody(result), true},
		{"event past the bound", mcptest.SSE(mcptest.SSEMessage(result)...), true},
		{"a request of the server's past the bound", mcptest.SSE(append(mcptest.SSEMessage(sampling), mcptest.SSEMessage(within)...)...), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHostile(t, mcptest.Stateful2025, httpsession.Config{MaxJSONValues: bound})
			h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"}, Action: c.action})
			v, _, err := h.call(t, "x")
			if !c.fails {
				require.NoError(t, err)
				h.requireAlive(t)
				return
			}
			require.Error(t, err)
			assert.Equal(t, classify.Protocol, v.Class)
			var he *classify.HTTPError
			require.True(t, errors.As(err, &he), "the call's exchange: %v", err)
			assert.True(t, he.Malformed && he.Oversized, "%+v", he.Exchange)
			assert.Equal(t, "JSON-RPC message with more than 1000 JSON values", he.Problem)
			h.requireAlive(t)
		})
	}
}

// TestMessagesOverTheBoundAreRefusedUndecoded: go-sdk decodes the messages
// of a prompts/get result and of a sampling/createMessage request one by
// one, some 30 KiB allocated each (a 16 MiB prompt allocated 10 GiB). A
// prompt with more messages than MaxMessages, or such a request on a
// call's stream, fails its call alone with a protocol verdict naming the
// bound; the session lives.
func TestMessagesOverTheBoundAreRefusedUndecoded(t *testing.T) {
	const bound = 5
	msg := `{"role":"user","content":{"type":"text","text":"hi"}}`
	messages := func(n int) string { return strings.TrimSuffix(strings.Repeat(msg+",", n), ",") }
	prompt := func(n int) string {
		return `{"jsonrpc":"2.0","id":$ID,"result":{"messages":[` + messages(n) + `]}}`
	}
	t.Run("prompts/get", func(t *testing.T) {
		for n, fails := range map[int]bool{bound: false, bound + 1: true} {
			h := newHostile(t, mcptest.Stateful2025, httpsession.Config{MaxMessages: bound})
			h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "prompts/get"}, Action: mcptest.JSONBody(prompt(n))})
			ctx, cancel := context.WithTimeout(httpsession.WithExchange(context.Background()), 20*time.Second)
			res, err := h.sess.ClientSession().GetPrompt(ctx, &mcp.GetPromptParams{Name: "p"})
			if !fails {
				require.NoError(t, err)
				require.Len(t, res.Messages, bound)
			} else {
				require.Error(t, err)
				err = httpsession.Annotate(ctx, err)
				assert.Equal(t, classify.Protocol, classify.Classify(context.Background(), err).Class)
				var he *classify.HTTPError
				require.True(t, errors.As(err, &he), "%v", err)
				assert.Equal(t, "prompts/get with more than 5 messages", he.Problem)
			}
			cancel()
			h.requireAlive(t)
		}
	})
	t.Run("a sampling request on the call's stream", func(t *testing.T) {
		sampling := `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"maxTokens":1,"messages":[` + messages(bound+1) + `]}}`
		answer := `{"jsonrpc":"2.0","id":$ID,"result":{"content":[]}}`
		h := newHostile(t, mcptest.Stateful2025, httpsession.Config{MaxMessages: bound})
		h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: "tools/call"},
			Action: mcptest.SSE(append(mcptest.SSEMessage(sampling), mcptest.SSEMessage(answer)...)...)})
		v, _, err := h.call(t, "x")
		require.Error(t, err)
		assert.Equal(t, classify.Protocol, v.Class)
		var he *classify.HTTPError
		require.True(t, errors.As(err, &he), "%v", err)
		assert.Equal(t, "sampling/createMessage with more than 5 messages", he.Problem)
		h.requireAlive(t)
	})
}

// TestResultOverTheContentBoundIsRefusedUndecoded: go-sdk decodes every
// content block of a tools/call result, and every content of a
// resources/read result, into a struct of its own and then a Content or
// ResourceContents (8 MiB of empty text blocks, within the value bound,
// allocated 158 MiB), and a block's own "content" into blocks again,
// whatever its type (as much nested in one tool_result block, or in a
// prompt's message). A result with more than MaxContentBlocks blocks, nested
// ones included, as one JSON body or as an event of a stream, is refused
// before go-sdk sees it: the
// call fails alone with a protocol verdict naming the bound, and the
// session lives. A result at the bound is served.
func TestResultOverTheContentBoundIsRefusedUndecoded(t *testing.T) {
	const bound = 100
	answer := func(key, item string, n int) string {
		return `{"jsonrpc":"2.0","id":$ID,"result":{"` + key + `":[` + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + `]}}`
	}
	call := func(n int) string { return answer("content", `{"type":"text","text":""}`, n) }
	// One block holding the rest: go-sdk decodes a block's "content" as
	// blocks again, whatever its type.
	nested := func(n int) string {
		return answer("content", `{"type":"tool_result","toolUseId":"u","content":[`+strings.TrimSuffix(strings.Repeat(`{"type":"text","text":""},`, n-1), ",")+`]}`, 1)
	}
	// A sampling request among the result's input requests, which go-sdk
	// decodes whole (keys in any letter case).
	input := func(n int) string {
		return `{"jsonrpc":"2.0","id":$ID,"result":{"content":[],"inputRequests":{"a":{"METHOD":"sampling/createMessage","params":{"maxTokens":1,` +
			`"messages":[{"role":"user","content":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":""},`, n), ",") + `]}]}}}}}`
	}
	prompt := func(n int) string {
		return `{"jsonrpc":"2.0","id":$ID,"result":{"messages":[{"role":"user","content":{"type":"text","text":"","content":[` +
			strings.TrimSuffix(strings.Repeat(`{},`, n-1), ",") + `]}}]}}`
	}
	read := func(n int) string { return answer("contents", `{"uri":"file:///x","text":""}`, n) }
	for _, c := range []struct {
		name, method string
		action       mcptest.Action
		problem      string // "" when served
	}{
		{"call JSON at the bound", "tools/call", mcptest.JSONBody(call(bound)), ""},
		{"call JSON past the bound", "tools/call", mcptest.JSONBody(call(bound + 1)), "tools/call result with more than 100 content blocks"},
		{"call event stream past the bound", "tools/call", mcptest.SSE(mcptest.SSEMessage(call(bound + 1))...), "tools/call result with more than 100 content blocks"},
		{"nested call JSON at the bound", "tools/call", mcptest.JSONBody(nested(bound)), ""},
		{"nested call JSON past the bound", "tools/call", mcptest.JSONBody(nested(bound + 1)), "tools/call result with more than 100 content blocks"},
		{"call with input requests past the bound", "tools/call", mcptest.JSONBody(input(bound)), "tools/call result with more than 100 objects in inputRequests"},
		{"nested prompt event stream past the bound", "prompts/get", mcptest.SSE(mcptest.SSEMessage(prompt(bound + 1))...), "prompts/get with more than 100 content blocks"},
		{"read JSON at the bound", "resources/read", mcptest.JSONBody(read(bound)), ""},
		{"read event stream past the bound", "resources/read", mcptest.SSE(mcptest.SSEMessage(read(bound + 1))...), "resources/read result with more than 100 resource contents"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHostile(t, mcptest.Stateful2025, httpsession.Config{MaxContentBlocks: bound, MaxInputRequestObjects: bound})
			h.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: http.MethodPost, Method: c.method}, Action: c.action})
			ctx, cancel := context.WithTimeout(httpsession.WithExchange(context.Background()), 20*time.Second)
			defer cancel()
			var blocks int
			var err error
			switch c.method {
			case "tools/call":
				var res *mcp.CallToolResult
				if res, err = h.sess.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool}); err == nil {
					// Every block, nested ones included, as go-sdk encodes them again.
					encoded, mErr := json.Marshal(res.Content)
					require.NoError(t, mErr)
					blocks = strings.Count(string(encoded), `"type":`)
				}
			case "prompts/get":
				_, err = h.sess.ClientSession().GetPrompt(ctx, &mcp.GetPromptParams{Name: "p"})
			default:
				var res *mcp.ReadResourceResult
				if res, err = h.sess.ClientSession().ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///x"}); err == nil {
					blocks = len(res.Contents)
				}
			}
			if c.problem == "" {
				require.NoError(t, err)
				require.Equal(t, bound, blocks)
				h.requireAlive(t)
				return
			}
			require.Error(t, err)
			err = httpsession.Annotate(ctx, err)
			assert.Equal(t, classify.Protocol, classify.Classify(context.Background(), err).Class)
			var he *classify.HTTPError
			require.True(t, errors.As(err, &he), "the call's exchange: %v", err)
			assert.True(t, he.Exchange.Malformed && he.Exchange.Oversized, "%+v", he.Exchange)
			assert.Equal(t, c.problem, he.Exchange.Problem)
			h.requireAlive(t)
		})
	}
}

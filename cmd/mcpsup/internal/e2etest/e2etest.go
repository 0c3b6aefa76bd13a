//lint:file-ignore SA1019 logging and roots, deprecated from protocol 2026-07-28 on (SEP-2577), are what a server here uses

// Package e2etest holds the upstream servers of the gateway's end-to-end
// tests: a stdio server (internal/stdiotest/server), a go-sdk server over
// streamable HTTP (mcptest), one behind a port the test switches off and on
// (mcptest.Port: a server that dies and comes back), one whose tool elicits,
// and a 2026-07-28 one that asks for input by multi round-trip.
package e2etest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/internal/stdiotest"
	"github.com/mcpsup/mcpsup/mcptest"
)

// Upstreams are the servers of a test, by their names in the servers file:
// "files" (stdio), "search" (HTTP), "flaky" (HTTP behind Port), "mrtr"
// (see MRTR), "ask" (an
// HTTP server whose tool "confirm" elicits, with a prompt "greet" whose
// argument completes, a tool "roots" that lists the client's roots, a tool
// "log" that logs, and a resource "ask://doc"
// that the tool "touch" marks updated).
type Upstreams struct {
	StdioBin string
	HTTP     *mcptest.Server
	Flaky    *mcptest.Server
	Port     *mcptest.Port
	Ask      string // URL
	// Elicited counts the answers the "confirm" tool got.
	Elicited chan *mcp.ElicitResult
	// ElicitFailed receives the error of each elicitation of "confirm"
	// that failed (up to 64 unread; more are not recorded).
	ElicitFailed chan error
	// Confirms counts the calls of "confirm" that ran.
	Confirms atomic.Int64
	// MRTR is a 2026-07-28 server ("mrtr") that asks for input by multi
	// round-trip.
	MRTR *MRTR
	// Subscribed and Unsubscribed receive the URI of every
	// resources/subscribe and resources/unsubscribe "ask" answers (up to
	// 16 unread each; more are not recorded).
	Subscribed, Unsubscribed chan string
}

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// Cleanup removes the stdio server's build; a test binary's TestMain calls
// it after the tests.
func Cleanup() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}

// New starts the upstreams; they end with the test.
func New(t *testing.T, ctx context.Context) *Upstreams {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpsup-e2e")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		buildBin, buildErr = stdiotest.Build(ctx, dir)
	})
	require.NoError(t, buildErr)
	u := &Upstreams{StdioBin: buildBin, Elicited: make(chan *mcp.ElicitResult, 4), ElicitFailed: make(chan error, 64),
		Subscribed: make(chan string, 16), Unsubscribed: make(chan string, 16)}
	var err error
	u.HTTP, err = mcptest.NewServer(mcptest.Options{Tools: 2, Prompts: 1, Resources: 1, Templates: 1})
	require.NoError(t, err)
	t.Cleanup(u.HTTP.Close)
	u.Flaky, err = mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(u.Flaky.Close)
	fu, err := url.Parse(u.Flaky.URL())
	require.NoError(t, err)
	u.Port, err = mcptest.NewPort(fu.Host)
	require.NoError(t, err)
	t.Cleanup(u.Port.Down)

	ask := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			record(u.Subscribed, req.Params.URI)
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			record(u.Unsubscribed, req.Params.URI)
			return nil
		},
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			if req.Params.Ref.Type != "ref/prompt" || req.Params.Ref.Name != "greet" {
				return nil, fmt.Errorf("no completion for %+v", *req.Params.Ref)
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{req.Params.Argument.Value + "lice"}}}, nil
		},
	})
	ask.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + req.Params.Arguments["name"]}}}}, nil
		})
	ask.AddTool(&mcp.Tool{Name: "confirm", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			u.Confirms.Add(1)
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message:         "proceed?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}},
			})
			if err != nil {
				select {
				case u.ElicitFailed <- err:
				default:
				}
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicit: " + err.Error()}}}, nil
			}
			select {
			case u.Elicited <- res:
			default:
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answer " + res.Action}}}, nil
		})
	ask.AddResource(&mcp.Resource{Name: "doc", URI: "ask://doc"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "doc"}}}, nil
	})
	ask.AddTool(&mcp.Tool{Name: "log", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "logged by ask"})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	ask.AddTool(&mcp.Tool{Name: "roots", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			text := "roots:"
			for _, r := range res.Roots {
				text += " " + r.URI
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	ask.AddTool(&mcp.Tool{Name: "touch", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = ask.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "ask://doc"})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ask }, nil))
	t.Cleanup(srv.Close)
	u.Ask = srv.URL
	u.MRTR = newMRTR(t)
	return u
}

func record(ch chan string, uri string) {
	select {
	case ch <- uri:
	default:
	}
}

// File writes the servers file of the upstreams into dir and returns its
// path; without names, every server, else those named.
func (u *Upstreams) File(t *testing.T, dir string, names ...string) string {
	t.Helper()
	all := map[string]any{
		"files":  map[string]any{"command": u.StdioBin},
		"search": map[string]any{"url": u.HTTP.URL()},
		"flaky":  map[string]any{"url": u.Port.URL(u.Flaky.URL())},
		"ask":    map[string]any{"url": u.Ask},
		"mrtr":   map[string]any{"url": u.MRTR.URL},
	}
	servers := all
	if len(names) > 0 {
		servers = map[string]any{}
		for _, n := range names {
			servers[n] = all[n]
		}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err)
	path := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

// ToolNames lists the tools cs sees, in the server's order.
func ToolNames(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

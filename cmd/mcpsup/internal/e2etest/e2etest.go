//lint:file-ignore SA1019 logging and roots, deprecated from protocol 2026-07-28 on (SEP-2577), are what a server here uses

// Package e2etest holds the upstream servers of the gateway's end-to-end
// tests: a stdio server (internal/stdiotest/server), a go-sdk server over
// streamable HTTP (mcptest), one behind a port the test switches off and on
// (a server that dies and comes back), and one whose tool elicits.
package e2etest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/internal/stdiotest"
	"github.com/mcpsup/mcpsup/mcptest"
)

// Upstreams are the servers of a test, by their names in the servers file:
// "files" (stdio), "search" (HTTP), "flaky" (HTTP behind Port), "ask" (an
// HTTP server whose tool "confirm" elicits, with a prompt "greet" whose
// argument completes, a tool "roots" that lists the client's roots, a tool
// "log" that logs, and a resource "ask://doc"
// that the tool "touch" marks updated).
type Upstreams struct {
	StdioBin string
	HTTP     *mcptest.Server
	Flaky    *mcptest.Server
	Port     *SwitchedPort
	Ask      string // URL
	// Elicited counts the answers the "confirm" tool got.
	Elicited chan *mcp.ElicitResult
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
	u := &Upstreams{StdioBin: buildBin, Elicited: make(chan *mcp.ElicitResult, 4),
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
	u.Port = NewSwitchedPort(t, fu.Host)

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
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message:         "proceed?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}},
			})
			if err != nil {
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

// SwitchedPort forwards TCP connections from a port of its own on
// 127.0.0.1 to a target: Down closes the port (connections to it are
// refused) and every connection through it, Up listens on the same port
// again. The server behind it, and its sessions, live on meanwhile.
type SwitchedPort struct {
	t      *testing.T
	addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	dials int
	wg    sync.WaitGroup
}

// Dials counts the connections forwarded so far.
func (p *SwitchedPort) Dials() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dials
}

// NewSwitchedPort listens on a free port of 127.0.0.1 and forwards to
// target until Down; it is down at the test's end.
func NewSwitchedPort(t *testing.T, target string) *SwitchedPort {
	t.Helper()
	p := &SwitchedPort{t: t, target: target, conns: map[net.Conn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.Down)
	return p
}

func (p *SwitchedPort) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			if !p.track(c, s) {
				return
			}
			for _, pair := range [][2]net.Conn{{c, s}, {s, c}} {
				p.wg.Go(func() {
					_, _ = io.Copy(pair[0], pair[1])
					_ = pair[0].Close()
					_ = pair[1].Close()
				})
			}
		}
	})
}

func (p *SwitchedPort) track(c, s net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		_, _ = c.Close(), s.Close()
		return false
	}
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.dials++
	return true
}

// Down closes the port and every connection through it, and waits for the
// forwarding to end.
func (p *SwitchedPort) Down() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	p.wg.Wait()
}

// Up listens on the port again.
func (p *SwitchedPort) Up() {
	p.t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	require.NoError(p.t, err)
	p.serve(ln)
}

// URL is srvURL with its host replaced by the port's.
func (p *SwitchedPort) URL(srvURL string) string {
	u, err := url.Parse(srvURL)
	require.NoError(p.t, err)
	u.Host = p.addr
	return u.String()
}

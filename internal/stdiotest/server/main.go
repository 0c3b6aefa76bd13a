//go:build unix

// Command server is a small stdio MCP server for mcpsup's tests, demo and
// benchmarks: it can be told to crash, hang, print garbage on stdout, write
// to stderr, or start a child in its process group or out of it.
//
// Tools: echo {text}; crash {code}: exit with code, the call unanswered;
// kill: SIGKILL itself; freeze: SIGSTOP itself (a hung server: nothing is
// answered, stdin is not read); garbage {lines}: print that many non-JSON
// lines on stdout, then answer; stderr {text}: write text to stderr; pings: answer
// how many ping requests it received (answered or not); closeout: close
// stdout and keep running, the call unanswered; stray: print two
// responses to ids never sent, then answer; strayid {bytes}: print a
// response to a string id of about that many bytes, then answer; deep
// {levels}: answer with that many levels of arrays nested in the result;
// padded {bytes}: answer with that many more bytes in the result;
// deafflood {n}: stop reading stdin, print n ping requests, then answer;
// pid: answer "<pid> <pgid> <child pid>".
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	exitAfter := flag.Int("exit-after-lines", 0, "exit after writing this many lines to stdout (0: never)")
	exitCode := flag.Int("exit-code", 3, "the code of -exit-after-lines")
	ignoreEOF := flag.Bool("ignore-stdin-eof", false, "keep running after stdin ends")
	ignoreTerm := flag.Bool("ignore-sigterm", false, "ignore SIGTERM")
	garbage := flag.String("garbage-at-start", "", "print this line on stdout before serving")
	huge := flag.Int("huge-line-at-start", 0, "print a line of this many bytes on stdout before serving, written without a newline until the end")
	stderrStart := flag.String("stderr-at-start", "", "write this line on stderr before serving")
	apiKey := flag.String("api-key", "", "a credential, written on stderr before serving as a careless server logs its configuration")
	child := flag.Bool("child", false, "start a child process in the process group")
	setsidChild := flag.Bool("setsid-child", false, "start a child process in a session of its own (setsid: out of the process group) that holds stdout and stderr")
	sleeper := flag.Bool("sleeper", false, "be the child: block until killed")
	barrier := flag.String("eof-barrier", "", "after stdin ends, write a file named for the pid into this directory, wait until it holds -eof-barrier-n of them, write done-<pid> and exit 0: the servers of a test stop only all together")
	barrierN := flag.Int("eof-barrier-n", 1, "the count of -eof-barrier")
	flag.Parse()

	if *sleeper {
		select {}
	}
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	childPID := 0
	if *child {
		c := exec.Command(os.Args[0], "-sleeper")
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		childPID = c.Process.Pid
	}
	if *setsidChild {
		c := exec.Command(os.Args[0], "-sleeper")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		childPID = c.Process.Pid
	}
	if *apiKey != "" {
		fmt.Fprintln(os.Stderr, "configured with api key "+*apiKey)
	}
	if *stderrStart != "" {
		fmt.Fprintln(os.Stderr, *stderrStart)
	}
	out := &lineWriter{w: os.Stdout, exitAfter: *exitAfter, code: *exitCode}
	if *garbage != "" {
		out.raw(*garbage + "\n")
	}
	if *huge > 0 {
		chunk := strings.Repeat("x", 4096)
		for n := *huge; n > 0; n -= len(chunk) {
			out.raw(chunk[:min(n, len(chunk))])
		}
		out.raw("\n")
	}

	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpsup-stdio-testserver", Version: "1"}, nil)
	var pings atomic.Int64
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "ping" {
				pings.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return text(a.Text), nil, nil
	})
	type blocksArgs struct {
		N int `json:"n"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "blocks"}, func(_ context.Context, _ *mcp.CallToolRequest, a blocksArgs) (*mcp.CallToolResult, any, error) {
		res := &mcp.CallToolResult{}
		for range a.N {
			res.Content = append(res.Content, &mcp.TextContent{Text: "b"})
		}
		return res, nil, nil
	})
	type crashArgs struct {
		Code int `json:"code"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "crash"}, func(_ context.Context, _ *mcp.CallToolRequest, a crashArgs) (*mcp.CallToolResult, any, error) {
		os.Exit(a.Code)
		return nil, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "kill"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "freeze"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		// stdout is held first: the threads a SIGSTOP reaches last may
		// not write anything meanwhile.
		out.mu.Lock()
		_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		select {}
	})
	type garbageArgs struct {
		Lines int `json:"lines"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "garbage"}, func(_ context.Context, _ *mcp.CallToolRequest, a garbageArgs) (*mcp.CallToolResult, any, error) {
		for i := range a.Lines {
			out.raw(fmt.Sprintf("garbage line %d: not JSON\n", i+1))
		}
		return text("printed"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "stderr"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		fmt.Fprint(os.Stderr, a.Text)
		return text("written"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "stray"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		out.raw(`{"jsonrpc":"2.0","id":987654,"result":{}}` + "\n")
		out.raw(`{"jsonrpc":"2.0","id":"not-an-id","result":{}}` + "\n")
		return text("strayed"), nil, nil
	})
	type bytesArgs struct {
		Bytes int `json:"bytes"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "strayid"}, func(_ context.Context, _ *mcp.CallToolRequest, a bytesArgs) (*mcp.CallToolResult, any, error) {
		// A response to a string id of about that many bytes, terminal
		// escapes first, then the answer.
		id := strings.Repeat(`\u001b[2J`, 100) + strings.Repeat("Z", max(a.Bytes-400, 0))
		out.raw(`{"jsonrpc":"2.0","id":"` + id + `","result":{}}` + "\n")
		return text("strayed"), nil, nil
	})
	type levelsArgs struct {
		Levels int `json:"levels"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "deep"}, func(_ context.Context, _ *mcp.CallToolRequest, a levelsArgs) (*mcp.CallToolResult, any, error) {
		nested := strings.Repeat("[", a.Levels) + strings.Repeat("]", a.Levels)
		out.mangleNext(func(line []byte) []byte {
			return []byte(strings.Replace(string(line), `"result":{`, `"result":{"deep":`+nested+`,`, 1))
		})
		return text("deep"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "padded"}, func(_ context.Context, _ *mcp.CallToolRequest, a bytesArgs) (*mcp.CallToolResult, any, error) {
		pad := strings.Repeat("p", a.Bytes)
		out.mangleNext(func(line []byte) []byte {
			return []byte(strings.Replace(string(line), `"result":{`, `"result":{"pad":"`+pad+`",`, 1))
		})
		return text("padded"), nil, nil
	})
	stdin := &gatedReader{r: os.Stdin, shut: make(chan struct{})}
	type floodArgs struct {
		N int `json:"n"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "deafflood"}, func(_ context.Context, _ *mcp.CallToolRequest, a floodArgs) (*mcp.CallToolResult, any, error) {
		stdin.once.Do(func() { close(stdin.shut) })
		for i := range a.N {
			out.raw(fmt.Sprintf(`{"jsonrpc":"2.0","id":"flood-%d","method":"ping"}`+"\n", i+1))
		}
		return text("flooded"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "sample"}, func(_ context.Context, _ *mcp.CallToolRequest, a floodArgs) (*mcp.CallToolResult, any, error) {
		// Requests of the server's written as they are, not waited for: the
		// client's handling of them is what a test watches.
		for i := range a.N {
			out.raw(fmt.Sprintf(`{"jsonrpc":"2.0","id":"sample-%d","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}`+"\n", i+1))
		}
		return text("sampled"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "closeout"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		out.mu.Lock() // nothing is written after
		_ = os.Stdout.Close()
		select {}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "pings"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprint(pings.Load())), nil, nil
	})
	type getenvArgs struct {
		Name string `json:"name"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "getenv"}, func(_ context.Context, _ *mcp.CallToolRequest, a getenvArgs) (*mcp.CallToolResult, any, error) {
		// Whether the variable is set, never its value.
		if _, ok := os.LookupEnv(a.Name); ok {
			return text("set"), nil, nil
		}
		return text("unset"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "pid"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		pgid, _ := syscall.Getpgid(0)
		return text(fmt.Sprintf("%d %d %d", os.Getpid(), pgid, childPID)), nil, nil
	})

	err := srv.Run(context.Background(), &mcp.IOTransport{Reader: stdin, Writer: out})
	if err != nil && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintln(os.Stderr, "server:", err)
	}
	if *barrier != "" {
		awaitBarrier(*barrier, *barrierN)
	}
	if *ignoreEOF {
		select {}
	}
}

// awaitBarrier writes this process's file into dir, waits until dir holds
// n of them, then writes done-<pid> and exits 0.
func awaitBarrier(dir string, n int) {
	pid := os.Getpid()
	if err := os.WriteFile(fmt.Sprintf("%s/eof-%d", dir, pid), nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "barrier:", err)
		os.Exit(1)
	}
	for {
		seen, _ := filepath.Glob(dir + "/eof-*")
		if len(seen) >= n {
			_ = os.WriteFile(fmt.Sprintf("%s/done-%d", dir, pid), nil, 0o600)
			os.Exit(0)
		}
		time.Sleep(5 * time.Millisecond) // a process of its own: polls the directory
	}
}

// lineWriter writes go-sdk's messages, one line per Write, and exits after
// exitAfter of them.
type lineWriter struct {
	mu        sync.Mutex
	w         io.Writer
	n         int
	exitAfter int
	code      int
	mangle    func([]byte) []byte // applied to the next response with a result
}

// mangleNext has the next response with a result written as m makes it.
func (l *lineWriter) mangleNext(m func([]byte) []byte) {
	l.mu.Lock()
	l.mangle = m
	l.mu.Unlock()
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mangle != nil && strings.Contains(string(p), `"result":{`) {
		p, l.mangle = l.mangle(p), nil
	}
	n, err := l.w.Write(p)
	l.n++
	if l.exitAfter > 0 && l.n >= l.exitAfter {
		os.Exit(l.code)
	}
	return n, err
}

func (l *lineWriter) raw(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, s)
}

func (l *lineWriter) Close() error { return nil }

// gatedReader reads r until shut is closed, then blocks for good: a server
// that stopped reading its stdin (a read under way still returns).
type gatedReader struct {
	r    io.Reader
	once sync.Once
	shut chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	select {
	case <-g.shut:
		select {}
	default:
		return g.r.Read(p)
	}
}

func (g *gatedReader) Close() error { return nil }

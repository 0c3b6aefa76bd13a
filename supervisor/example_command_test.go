//go:build unix

package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/internal/stdiotest"
	"github.com/mcpsup/mcpsup/stdio"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A stdio server is supervised like an HTTP one: Config.Command in place
// of Config.Endpoint. Here the server is mcpsup's test server; a host names
// its own, e.g. stdio.Command{Path: "npx", Args: []string{"-y",
// "@modelcontextprotocol/server-everything"}}. When the process dies it is
// started again, and a call made meanwhile waits for it.
func ExampleCommand() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	bin, err := stdiotest.Build(ctx, dir)
	if err != nil {
		fmt.Println(err)
		return
	}

	sup, err := supervisor.New(supervisor.Config{
		Name:     "tools",
		Command:  &stdio.Command{Path: bin, StopGrace: time.Second},
		Recovery: supervisor.RecoveryConfig{Backoff: supervisor.Backoff{InitialInterval: 10 * time.Millisecond}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sup.Close()
	sup.Start()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		fmt.Println(err)
		return
	}

	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{"code": 3}})
	var exit *stdio.ProcessExitError
	if errors.As(err, &exit) {
		fmt.Println("the server exited with code", exit.Code)
	}
	res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text, "from process", sup.SessionsOpened())
	// Output:
	// the server exited with code 3
	// hello from process 2
}

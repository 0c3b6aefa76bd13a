package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/supervisor"
)

// toolCall is one -call flag: a tool and its arguments.
type toolCall struct {
	name string
	args map[string]any // nil: no arguments
}

// maxResultText bounds the text of a result printed on one line.
const maxResultText = 200

// parseCall reads NAME or NAME=JSON, the JSON a JSON object of arguments.
func parseCall(s string) (toolCall, error) {
	name, raw, hasArgs := strings.Cut(s, "=")
	if name == "" {
		return toolCall{}, fmt.Errorf("-call %q: the tool name is empty", s)
	}
	c := toolCall{name: name}
	if !hasArgs {
		return c, nil
	}
	if err := json.Unmarshal([]byte(raw), &c.args); err != nil || c.args == nil {
		return toolCall{}, fmt.Errorf("-call %q: the arguments after = must be a JSON object", s)
	}
	return c, nil
}

// callTools waits for the first ready, then calls every tool of calls in
// order, once, or every `every` until ctx ends, printing each outcome.
func callTools(ctx context.Context, sup *supervisor.Supervisor, calls []toolCall, every time.Duration, out io.Writer) {
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		return
	}
	for {
		for _, c := range calls {
			if ctx.Err() != nil {
				return
			}
			res, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
			if ctx.Err() != nil {
				return // stopping: the outcome says nothing of the server
			}
			fmt.Fprintln(out, outcomeLine(c.name, res, err, sup))
		}
		if every <= 0 {
			return
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// outcomeLine describes one call's outcome: its result, or its failure's
// class, HTTP status and delivery (and whether it may be sent again), with
// the state and generation it leaves, e.g.
//
//	call search: ok: 3 results [ready, generation 1]
//	call search: failed: transport, no HTTP status, outcome-unknown, not resendable [ready, generation 1]
func outcomeLine(name string, res *mcp.CallToolResult, err error, sup *supervisor.Supervisor) string {
	where := fmt.Sprintf("[%s, generation %d]", sup.State(), sup.Generation())
	var ce *supervisor.CallError
	switch {
	case err == nil:
		what := "ok"
		if res.IsError {
			what = "tool error"
		}
		return fmt.Sprintf("call %s: %s: %s %s", name, what, resultText(res), where)
	case errors.As(err, &ce):
		status := "no HTTP status"
		if ce.Verdict.HTTPStatus != 0 {
			status = fmt.Sprintf("HTTP %d", ce.Verdict.HTTPStatus)
		}
		resend := "not resendable"
		if ce.Resendable() {
			resend = "resendable"
		}
		return fmt.Sprintf("call %s: failed: %s, %s, %s, %s %s", name, ce.Verdict.Class, status, ce.Delivery, resend, where)
	}
	return fmt.Sprintf("call %s: failed: %v %s", name, err, where)
}

// resultText is the result's text content on one line, bounded.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		if res.StructuredContent != nil {
			b, _ := json.Marshal(res.StructuredContent)
			parts = append(parts, string(b))
		} else {
			parts = append(parts, fmt.Sprintf("(%d content items, no text)", len(res.Content)))
		}
	}
	s := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	if len(s) > maxResultText {
		s = s[:maxResultText] + "..."
	}
	return s
}

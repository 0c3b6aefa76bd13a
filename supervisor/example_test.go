package supervisor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A host supervises one MCP server and calls a tool. The gateway in front of
// the server answers the first tools/call with 429 and Retry-After (failure
// story S4): the call fails with a verdict naming the status, and the session
// and its generation are kept.
func Example() {
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 2})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	rule := mcptest.ToolCallRateLimited(2 * time.Second)
	rule.Match.Occurrence = mcptest.First()
	srv.Gateway().Add(rule)

	sup, err := supervisor.New(supervisor.Config{Endpoint: srv.URL(), HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}, Limits: supervisor.LimitsConfig{DisableRateLimitWindow: true}})
	if err != nil {
		panic(err)
	}
	defer sup.Close()
	sup.Start()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		panic(err)
	}
	fmt.Println("tools:", sup.Catalog().ToolNames())

	call := &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "1"}}
	_, err = sup.CallTool(ctx, call)
	fmt.Println("first call:", err)
	_, err = sup.CallTool(ctx, call)
	fmt.Println("second call ok:", err == nil)
	fmt.Println("state:", sup.State(), "generation:", sup.Generation())
	// Output:
	// tools: [block record tool-1 tool-2]
	// first call: mcpsup: tools/call "record": rate-limited (HTTP 429, retry after 2s, tools/call)
	// second call ok: true
	// state: ready generation: 1
}

// A host that persists the resume state re-attaches the same session after a
// restart: no initialize reaches the server.
func Example_resume() {
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	first, _ := supervisor.New(supervisor.Config{Endpoint: srv.URL(), HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}})
	first.Start()
	if err := first.WaitForState(ctx, supervisor.Ready); err != nil {
		panic(err)
	}
	_ = first.Detach() // keep the server-side session
	saved := first.ResumeState()

	srv.Log().Reset()
	second, _ := supervisor.New(supervisor.Config{Endpoint: srv.URL(), Resume: saved, HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}})
	defer second.Close()
	second.Start()
	if err := second.WaitForState(ctx, supervisor.Ready); err != nil {
		panic(err)
	}
	fmt.Println("same session:", second.ResumeState().SessionID == saved.SessionID)
	fmt.Println("initialize requests:", srv.Log().Count("initialize"))
	// Output:
	// same session: true
	// initialize requests: 0
}

// A host's events sink switches on the typed vocabulary the supervisor
// re-exports. Here the gateway answers the handshake 401: the supervisor
// reaches a terminal failed state whose reason is unauthorized, and the sink
// (which may call any method) closes it.
func ExampleKind() {
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "initialize"},
		Action: mcptest.PlainText(401, "unauthorized")})

	var sup *supervisor.Supervisor
	closed := make(chan struct{})
	sink := events.SinkFunc(func(e events.Event) {
		switch {
		case e.Kind == events.KindTransition && e.To == supervisor.Failed && e.Reason == supervisor.ReasonUnauthorized:
			fmt.Println("failed:", e.Reason, "after", e.Trigger)
			_ = sup.Close() // from the sink: no deadlock
			close(closed)
		case e.Kind == events.KindCallFailed:
			fmt.Println("a call failed")
		}
	})
	sup, err = supervisor.New(supervisor.Config{Endpoint: srv.URL(), HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}, Observe: supervisor.ObserveConfig{Events: sink}})
	if err != nil {
		panic(err)
	}
	sup.Start()
	<-closed
	fmt.Println("state:", sup.State())
	// Output:
	// failed: unauthorized after handshake-failed
	// state: closed
}

// A host tunes the standalone stream and the protocol era with the
// supervisor's own types; every zero field keeps its default.
func ExampleConfig_stream() {
	cfg := supervisor.Config{
		Endpoint: "http://127.0.0.1:8080/mcp",
		Era:      supervisor.Era2025, // no server/discover first
		Stream: supervisor.StreamConfig{
			Policy:      supervisor.StreamAuto,
			HostileRule: supervisor.HostileRule{Threshold: 5},
			Keeper:      supervisor.StreamKeeper{Span: 5 * time.Second, MaxBackoff: time.Minute},
		},
	}
	fmt.Println(cfg.Era, cfg.Stream.Policy, cfg.Stream.HostileRule.Threshold, cfg.Stream.Keeper.Span)
	// Output: 2025-11-25 auto 5 5s
}

// A host asks for a re-list after it learned, another way, that the server
// changed, and reads the typed diff from the catalog-changed event.
func ExampleSupervisor_RefreshCatalog() {
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	diffs := make(chan supervisor.CatalogDiff, 4)
	sup, err := supervisor.New(supervisor.Config{
		Endpoint: srv.URL(),
		HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff}, // no list_changed reaches the host
		Observe: supervisor.ObserveConfig{Events: events.SinkFunc(func(e events.Event) {
			if e.Kind == events.KindCatalogChanged {
				diffs <- supervisor.CatalogDiffOf(e)
			}
		})},
	})
	if err != nil {
		panic(err)
	}
	defer sup.Close()
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		panic(err)
	}
	fmt.Println("first:", (<-diffs).Tools.Added)

	srv.AddTool("new")
	srv.RemoveTool(mcptest.ToolName(1))
	if err := sup.RefreshCatalog(ctx); err != nil {
		panic(err)
	}
	d := <-diffs
	fmt.Println("added:", d.Tools.Added, "removed:", d.Tools.Removed)
	fmt.Println("tools:", sup.Catalog().ToolNames())
	// Output:
	// first: [block record tool-1]
	// added: [new] removed: [tool-1]
	// tools: [block new record]
}

// With ResendSafe, a call to a tool annotated idempotentHint whose answer was
// lost (the server ran it, the connection was reset) is sent once more after
// the session is verified; a call-resent event says so.
func ExampleResendPolicy() {
	srv, err := mcptest.NewServer(mcptest.Options{IdempotentRecord: true})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: "POST", Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.ResetAfterServer(),
	})
	rec := &events.Recorder{}
	sup, err := supervisor.New(supervisor.Config{
		Endpoint: srv.URL(),
		HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
		Recovery: supervisor.RecoveryConfig{Resend: supervisor.ResendSafe},
		Observe:  supervisor.ObserveConfig{Events: rec},
	})
	if err != nil {
		panic(err)
	}
	defer sup.Close()
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		panic(err)
	}
	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.IdempotentRecordTool, Arguments: mcptest.IDArgs{ID: "1"}})
	fmt.Println("call ok:", err == nil)
	fmt.Println("executions:", srv.Invocations(mcptest.IdempotentRecordTool, "1"))
	evs, _ := rec.WaitFor(ctx, func(evs []events.Event) bool {
		for _, e := range evs {
			if e.Kind == events.KindCallResent {
				return true
			}
		}
		return false
	})
	for _, e := range evs {
		if e.Kind == events.KindCallResent {
			fmt.Println(e.Kind, e.Name, e.Delivery, e.Verdict.Class)
		}
	}
	// Output:
	// call ok: true
	// executions: 2
	// call-resent record-idempotent outcome-unknown transport
}

// On a 2026-07-28 server a call's response stream that breaks before the
// response loses the request, and the changelog (item 9, SEP-2575) says the
// client "MUST re-issue it as a new request with a new request ID": the
// supervisor does so once, and a call-reissued event names both requests.
// A host that needs at-most-once calls sets Config.Recovery.NoReissue.
func ExampleConfig_noReissue() {
	srv, err := mcptest.NewServer(mcptest.Options{Mode: mcptest.Sessionless2026})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	// The first tools/call runs, then its stream breaks: an event id, a reset.
	srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Verb: "POST", Method: "tools/call", Occurrence: mcptest.First()},
		Action: mcptest.ServerThen(mcptest.SSEThenReset("id: 1", "data:", "")),
	})
	rec := &events.Recorder{}
	sup, err := supervisor.New(supervisor.Config{Endpoint: srv.URL(), HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}, Observe: supervisor.ObserveConfig{Events: rec}})
	if err != nil {
		panic(err)
	}
	defer sup.Close()
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		panic(err)
	}
	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "1"}})
	fmt.Println("call ok:", err == nil)
	fmt.Println("executions:", srv.Invocations(mcptest.RecordTool, "1"))
	fmt.Println("resumptions (GET):", srv.Log().CountVerb("GET"))
	evs, _ := rec.WaitFor(ctx, func(evs []events.Event) bool {
		for _, e := range evs {
			if e.Kind == events.KindCallReissued {
				return true
			}
		}
		return false
	})
	for _, e := range evs {
		if e.Kind == events.KindCallReissued {
			fmt.Println(e.Kind, e.Name, e.Delivery, e.Verdict.Class)
		}
	}
	// Output:
	// call ok: true
	// executions: 2
	// resumptions (GET): 0
	// call-reissued record outcome-unknown transport
}

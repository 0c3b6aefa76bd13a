package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// printStages is a CallHandler that prints what it is told.
type printStages struct{}

func (printStages) TagCall(ctx context.Context, info supervisor.CallInfo) context.Context {
	fmt.Println("call:", info.Op, info.Name)
	return ctx // a tracer returns the context of the span it started
}

func (printStages) HandleCall(_ context.Context, stage supervisor.CallStage) {
	switch st := stage.(type) {
	case *supervisor.CallWaited:
		fmt.Println("  waited in", st.From, "for generation", st.Generation)
	case *supervisor.CallSessionLost:
		fmt.Println("  cost session", st.Generation, "("+st.Verdict.Class.String()+")")
	case *supervisor.CallResent:
		fmt.Println("  resent after", st.Err.Delivery)
	case *supervisor.CallEnd:
		fmt.Println("  end, error:", st.Err != nil)
	}
}

// A CallHandler hears what no request middleware sees: here, a call whose
// session the server had expired (404) costs that session.
// mcpsupotel.Observer.CallHandler makes a span of the same stages.
func ExampleCallHandler() {
	srv, err := mcptest.NewServer(mcptest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	// Stream off and no poll: only the call can find the expired session
	// (the standalone stream would race it to the 404).
	sup, err := supervisor.New(supervisor.Config{
		Endpoint: srv.URL(),
		HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
		Observe:  supervisor.ObserveConfig{CallHandler: printStages{}},
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Limits:   supervisor.LimitsConfig{CatalogPollInterval: -1},
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
	_, _ = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "1"}})
	srv.ExpireAll()
	_, _ = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "2"}})
	// Output:
	// call: tools/call record
	//   end, error: false
	// call: tools/call record
	//   cost session 1 (session-expired)
	//   end, error: true
}

// A long-running tool that reports progress is not cut off by
// CallTimeout: each progress notification for the call's token starts it
// over, up to CallTimeoutCeiling from the send. The clock here is a fake
// one, moved by hand.
func ExampleConfig_callTimeoutCeiling() {
	srv, err := mcptest.NewServer(mcptest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	clock := clockwork.NewFakeClock()
	heard := make(chan struct{}, 1)
	sup, err := supervisor.New(supervisor.Config{
		Endpoint: srv.URL(),
		HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
		Observe:  supervisor.ObserveConfig{Clock: clock},
		Limits: supervisor.LimitsConfig{
			CallTimeout:         10 * time.Second,
			CallTimeoutCeiling:  25 * time.Second,
			CatalogPollInterval: -1, // no other timer on the clock
		},
		Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Client: supervisor.ClientConfig{ClientOptions: mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			heard <- struct{}{} // the supervisor extended the call first
		}}},
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

	params := &mcp.CallToolParams{Name: mcptest.BlockTool, Arguments: mcptest.IDArgs{ID: "job"}}
	params.SetProgressToken("job-1")
	errc := make(chan error, 1)
	go func() {
		_, err := sup.CallTool(context.Background(), params) // no deadline: CallTimeout bounds it
		errc <- err
	}()
	if err := srv.WaitBlocked(ctx, "job"); err != nil {
		panic(err)
	}
	start := clock.Now()
	for range 3 {
		clock.Advance(8 * time.Second)
		srv.Progress("job") // the tool reports progress
		<-heard
		fmt.Println(clock.Since(start), "progress: the call goes on")
	}
	clock.Advance(time.Second) // the ceiling
	err = <-errc
	var ce *supervisor.CallError
	if errors.As(err, &ce) {
		fmt.Println(clock.Since(start), ce.Verdict.Class, ce.Delivery)
	}
	// Output:
	// 8s progress: the call goes on
	// 16s progress: the call goes on
	// 24s progress: the call goes on
	// 25s timeout outcome-unknown
}

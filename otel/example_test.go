package mcpsupotel_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
	mcpsupotel "github.com/mcpsup/mcpsup/otel"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A supervisor's events become metrics, a client's calls become spans whose
// context reaches the server in _meta. Here a tool call is answered 429
// (failure story S4); go run ./examples/otel prints the same signals through
// the SDK's stdout exporters.
func ExampleObserver() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewInMemoryExporter()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	obs, err := mcpsupotel.New(mcpsupotel.Options{MeterProvider: mp, TracerProvider: tp})
	if err != nil {
		panic(err)
	}
	srv, err := mcptest.NewServer(mcptest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	// Metrics: add the sink to the supervisor's events (with the host's own:
	// events.Multi(hostSink, obs.Sink())).
	sup, err := supervisor.New(supervisor.Config{Name: "docs", Endpoint: srv.URL(), HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}, Observe: supervisor.ObserveConfig{Events: obs.Sink()}})
	if err != nil {
		panic(err)
	}
	sup.Start()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		panic(err)
	}
	// Spans: add the middleware to a go-sdk client, before the wire facts.
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
	client.AddSendingMiddleware(obs.Middleware("docs"), httpsession.FactsMiddleware())
	sess, err := httpsession.Open(ctx, httpsession.Options{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient(), Client: client, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
	if err != nil {
		panic(err)
	}
	defer sess.Close()

	rule := mcptest.ToolCallRateLimited(30 * time.Second)
	rule.Match.Occurrence = mcptest.FirstN(2)
	srv.Gateway().Add(rule)
	params := func(id string) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}}
	}
	_, err = sup.CallTool(ctx, params("a"))
	fmt.Println("supervisor:", err)
	_, err = sess.ClientSession().CallTool(ctx, params("b"))
	fmt.Println("client failed:", err != nil)
	_, err = sess.ClientSession().CallTool(ctx, params("c"))
	fmt.Println("client then:", err, "traceparent sent:", srv.RecordedMeta("c")["traceparent"] != nil)
	if err := sup.Close(); err != nil { // the sink has every event once Close returns
		panic(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok && (m.Name == "mcpsup.sessions.opened" || m.Name == "mcpsup.calls.failed") {
			for _, p := range sum.DataPoints {
				class, _ := p.Attributes.Value("error.type")
				fmt.Println(strings.TrimSpace(fmt.Sprint(m.Name, " ", p.Value, " ", class.String())))
			}
		}
	}
	for _, s := range spans.GetSpans() {
		if s.Name == "tools/call record" {
			fmt.Println("span:", s.Name, s.Status.Code, s.Status.Description)
		}
	}
	// Output:
	// supervisor: mcpsup: tools/call "record": rate-limited (HTTP 429, retry after 30s, tools/call)
	// client failed: true
	// client then: <nil> traceparent sent: true
	// mcpsup.sessions.opened 1
	// mcpsup.calls.failed 1 rate-limited
	// span: tools/call record Error rate-limited (HTTP 429, retry after 30s, tools/call)
	// span: tools/call record Unset
}

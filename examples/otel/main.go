// Command otel prints, through the OpenTelemetry SDK's stdout exporters, the
// metrics and spans package otel (mcpsupotel) makes of a small story:
//
//	go run ./examples/otel
//
// A go-sdk MCP server on 127.0.0.1 behind an mcptest gateway answers one
// tools/call with HTTP 500 and one with HTTP 429 (Retry-After: 30) (failure
// story S4 of DESIGN.md). A supervisor reports its events to the Observer's
// sink (metrics: states, transitions, sessions, failed calls by class and
// delivery, the rate-limit window) and its calls to the Observer's call
// handler (a span per call, with the wait for ready and a lost session as
// span events); a go-sdk client on mcpsup's wire layer
// with the Observer's middleware makes the same calls under a host span
// (spans: one per request, the verdict on the failed ones, traceparent sent
// in _meta). Every line of the output is one JSON object (pipe it through
// jq to read them): each span as it ends, each call's outcome
// ({"story", "rule", "supervisor", "client"}: the two errors' texts), and
// the metrics at the end.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
	mcpsupotel "github.com/mcpsup/mcpsup/otel"
	"github.com/mcpsup/mcpsup/supervisor"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "otel:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	traceExp, err := stdouttrace.New(stdouttrace.WithWriter(w))
	if err != nil {
		return err
	}
	metricExp, err := stdoutmetric.New(stdoutmetric.WithWriter(w))
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(traceExp))
	reader := sdkmetric.NewPeriodicReader(metricExp, sdkmetric.WithInterval(time.Hour)) // exported at Shutdown
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = tp.Shutdown(ctx) }()

	obs, err := mcpsupotel.New(mcpsupotel.Options{MeterProvider: mp, TracerProvider: tp})
	if err != nil {
		return err
	}
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	if err != nil {
		return err
	}
	defer srv.Close()

	// Metrics: the supervisor's events. Spans: one per host call, the
	// recovery as its events.
	sup, err := supervisor.New(supervisor.Config{
		Name:     "s4",
		Endpoint: srv.URL(),
		HTTP:     supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()},
		Observe: supervisor.ObserveConfig{
			Events:      obs.Sink(),
			CallHandler: obs.CallHandler(),
		},
	})
	if err != nil {
		return err
	}
	sup.Start()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		return err
	}
	// Spans: a go-sdk client with the Observer's middleware, outside the
	// wire layer's facts so the verdicts rest on the HTTP status.
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
	client.AddSendingMiddleware(obs.Middleware("s4"), httpsession.FactsMiddleware())
	sess, err := httpsession.Open(ctx, httpsession.Options{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient(), Client: client, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
	if err != nil {
		return err
	}
	defer sess.Close()

	ctx, story := tp.Tracer("example").Start(ctx, "story S4")
	for _, rule := range []mcptest.Rule{mcptest.ToolCallServerError(), mcptest.ToolCallRateLimited(30 * time.Second)} {
		srv.Gateway().Clear()
		rule.Match.Occurrence = mcptest.FirstN(2) // the supervisor's call and the client's
		srv.Gateway().Add(rule)
		params := &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "x"}}
		_, supErr := sup.CallTool(ctx, params)
		_, cliErr := sess.ClientSession().CallTool(ctx, params)
		if err := json.NewEncoder(w).Encode(outcome{Story: "S4", Rule: rule.Name, Supervisor: errText(supErr), Client: errText(cliErr)}); err != nil {
			return err
		}
	}
	story.End()
	if err := sup.Close(); err != nil { // the sink has every event once Close returns
		return err
	}
	return mp.Shutdown(ctx) // exports the metrics
}

// outcome is one line of the story's own: the errors of the supervisor's
// and the client's call under a gateway rule.
type outcome struct {
	Story      string `json:"story"`
	Rule       string `json:"rule"`
	Supervisor string `json:"supervisor"`
	Client     string `json:"client"`
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

package mcpsupotel_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpsup/mcpsup/mcptest"
	mcpsupotel "github.com/mcpsup/mcpsup/otel"
	"github.com/mcpsup/mcpsup/supervisor"
)

// benchVariants are the clients compared: a bare go-sdk client, and the same
// client with the middleware on no-op providers and on the SDK (metrics to a
// ManualReader, spans batched to an exporter that drops them).
func benchVariants(b *testing.B) map[string][]mcp.Middleware {
	noop, err := mcpsupotel.New(mcpsupotel.Options{MeterProvider: metricnoop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider()})
	if err != nil {
		b.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
	sdk, err := mcpsupotel.New(mcpsupotel.Options{MeterProvider: mp, TracerProvider: tp})
	if err != nil {
		b.Fatal(err)
	}
	return map[string][]mcp.Middleware{
		"bare": nil,
		"noop": {noop.Middleware("bench")},
		"sdk":  {sdk.Middleware("bench")},
	}
}

var benchOrder = []string{"bare", "noop", "sdk"}

// BenchmarkCallToolInMemory: tools/call over go-sdk's in-memory transport to
// an in-process go-sdk server, so the middleware's cost is not lost in HTTP.
func BenchmarkCallToolInMemory(b *testing.B) {
	variants := benchVariants(b)
	for _, name := range benchOrder {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "v1"}, nil)
			mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
			})
			st, ct := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
			client.AddSendingMiddleware(variants[name]...)
			cs, err := client.Connect(ctx, ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCallToolHTTP: tools/call to mcptest's go-sdk server on 127.0.0.1
// over streamable HTTP.
func BenchmarkCallToolHTTP(b *testing.B) {
	variants := benchVariants(b)
	srv, err := mcptest.NewServer(mcptest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for _, name := range benchOrder {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
			client.AddSendingMiddleware(variants[name]...)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: srv.HTTPClient(), DisableStandaloneSSE: true}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "bench"}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMiddleware is the middleware alone around a handler that answers
// at once: what it adds to every request.
func BenchmarkMiddleware(b *testing.B) {
	variants := benchVariants(b)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return res, nil }
	req := &mcp.ClientRequest[mcp.Params]{Params: &mcp.CallToolParams{Name: "echo"}}
	for _, name := range benchOrder {
		b.Run(name, func(b *testing.B) {
			h := mcp.MethodHandler(next)
			for _, mw := range variants[name] {
				h = mw(h)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h(ctx, "tools/call", req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCallHandler is the call handler alone, as the supervisor drives
// it for a call that needs no wait: TagCall, then CallEnd.
func BenchmarkCallHandler(b *testing.B) {
	noop, err := mcpsupotel.New(mcpsupotel.Options{MeterProvider: metricnoop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider()})
	if err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	sdk, err := mcpsupotel.New(mcpsupotel.Options{MeterProvider: metricnoop.NewMeterProvider(), TracerProvider: tp})
	if err != nil {
		b.Fatal(err)
	}
	info := supervisor.CallInfo{Server: "bench", Op: "tools/call", Name: "echo"}
	for _, v := range []struct {
		name string
		obs  *mcpsupotel.Observer
	}{{"noop", noop}, {"sdk", sdk}} {
		b.Run(v.name, func(b *testing.B) {
			h := v.obs.CallHandler()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				cctx := h.TagCall(ctx, info)
				h.HandleCall(cctx, &supervisor.CallEnd{})
			}
		})
	}
}

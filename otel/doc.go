// Package mcpsupotel turns supervised MCP connections into OpenTelemetry
// signals: metrics from a supervisor's events, and a client span per call
// with the caller's trace carried to the server. It uses the OpenTelemetry
// API only; the host brings the SDK and its exporters (Options; the globals
// by default).
//
//	o, err := mcpsupotel.New(mcpsupotel.Options{MeterProvider: mp, TracerProvider: tp})
//	if err != nil { ... }
//	cfg.Observe.Events = events.Multi(hostSink, o.Sink())                     // metrics
//	cfg.Client.SendingMiddleware = []mcp.Middleware{o.Middleware(cfg.Name)} // spans, _meta traceparent
//	cfg.Observe.CallHandler = o.CallHandler()                                // a span per host call
//
// In a hub, hub.Config.ServerMiddleware = o.Middleware names it per server.
//
// # Metrics
//
// From [Observer.Sink], every point attributed by mcpsup.server
// (events.Event.Server). The MCP semantic conventions define only operation
// and session durations, so the connection's life has mcpsup.-prefixed
// names; error.type is the verdict's class (e.g. "rate-limited").
//
//	mcpsup.connection.state          up/down counter {connection}  mcpsup.state: connections in each state; idle and closed are not counted
//	mcpsup.connection.transitions    counter {transition}          mcpsup.from, mcpsup.to, mcpsup.trigger, error.type; internal transitions (from == to) included
//	mcpsup.sessions.opened           counter {session}             go-sdk sessions opened or attached
//	mcpsup.sessions.ended            counter {session}
//	mcpsup.retries.scheduled         counter {retry}               error.type
//	mcpsup.calls.failed              counter {call}                mcp.method.name, error.type, mcpsup.delivery (not-sent, outcome-unknown, answered)
//	mcpsup.catalog.size              gauge {item}                  mcpsup.catalog.kind (tools, resources, prompts, resource-templates), from each discovery and catalog change
//	mcpsup.stream.enabled            gauge 1                       1 when the standalone SSE stream is opened again, 0 when it is held; no point before the first decision
//	mcpsup.stream.events.dropped     counter {event}
//	mcpsup.rate_limit.windows        counter {window}              windows opened by a 429 with Retry-After
//	mcpsup.rate_limit.window.duration histogram s                  each window's length
//
// From [Observer.Middleware], the conventions' mcp.client.operation.duration
// (histogram, seconds) by mcp.method.name, gen_ai.tool.name or
// gen_ai.prompt.name, error.type and mcpsup.server. Traces: a client span per
// request ([Observer.Middleware]) under an internal span per host call
// ([Observer.CallHandler]).
//
// # What never leaves
//
// Session ids appear only hashed (events.HashSessionID); no free text of an
// event is read; a call's arguments and result only with
// Options.RecordPayloads, bounded by Options.MaxPayloadBytes.
package mcpsupotel

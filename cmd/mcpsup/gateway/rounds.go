//lint:file-ignore SA1019 sampling and roots, deprecated from protocol 2026-07-28 on (SEP-2577), are what an input request may still ask for

package gateway

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/supervisor"
)

// Bounds of the multi round-trip requests the gateway fulfils itself for a
// 2025-era client (see roundTrip); the figures are go-sdk's client's own
// (mcp/mrtr.go, maxMultiRoundTripRetries and
// maxLoadSheddingMultiRoundTripRetries).
const (
	// MaxInputRounds bounds the upstream rounds of one call.
	MaxInputRounds = 10
	// MaxShedRounds bounds the rounds in a row whose input_required result
	// asks for nothing (requestState alone: the server sheds load), each
	// retried at once.
	MaxShedRounds = 3
	// MaxInputRequests bounds the input requests of one round: each is a
	// request to the client, one at a time, bounded by the relay timeout.
	MaxInputRequests = 16
)

// protocol2026 is the first protocol version whose servers ask for input by
// multi round-trip and send no requests of their own (MCP 2026-07-28,
// basic/patterns/mrtr.mdx).
const protocol2026 = "2026-07-28"

// input is what a round carries upstream: the client's answers to the
// previous round's input requests and that round's requestState, both
// unchanged (mrtr.mdx, Client Requirements: "the client MUST echo back the
// exact value of that field").
type input struct {
	responses mcp.InputResponseMap
	state     string
}

// roundTrip sends a tools/call, prompts/get or resources/read upstream
// (send, one call per round) and carries the server's input requests (an
// InputRequiredResult, MCP 2026-07-28, basic/patterns/mrtr.mdx; pending
// reads them from a result) to the downstream client of the call:
//
//   - a 2026-07-28 client gets the InputRequiredResult itself, its
//     inputRequests and requestState unchanged, and retries with its
//     answers, which go upstream as they came (in, the first round's);
//   - a 2025-era client takes no InputRequiredResult: the gateway asks it
//     each input request as the server request it names
//     (elicitation/create, sampling/createMessage, roots/list), one at a
//     time, each bounded by the relay timeout, and sends the call upstream
//     again with the answers and the exact requestState, at most
//     MaxInputRounds rounds, MaxShedRounds in a row that ask for nothing,
//     MaxInputRequests input requests a round.
//
// An input request the client did not declare the capability for is never
// sent to it (mrtr.mdx: "Servers MUST NOT send an inputRequests that the
// client has not declared support for"): the call fails with -32603 whose
// data's class is "input-unsupported"; a bound passed fails it with class
// "input-rounds". A 2025-era server's own requests during a 2026-07-28
// client's call reach that client as an InputRequiredResult of the
// gateway's (clientRounds; origin, the method and downstream name, is what
// a retry must name; wrap makes the result). go-sdk's own round trips are off in the hub's client
// (gateway.New), so that this is the one place a round is decided.
func roundTrip[R any](ctx context.Context, r *relay, ss *mcp.ServerSession, origin string, in input,
	send func(context.Context, input) (R, error), pending func(R) (mcp.InputRequestMap, string),
	wrap func(mcp.InputRequestMap, string) R) (R, error) {
	var zero R
	c, _ := ctx.Value(callKey{}).(*call)
	ip := ss.InitializeParams()
	if takesInputRequired(ip) {
		res, err := clientRounds(ctx, r, ss, origin, in, send, wrap)
		if err != nil {
			return zero, err
		}
		// go-sdk's server marks the result input_required for this
		// client (its resultType); nothing else is changed.
		reqs, _ := pending(res)
		for id, ir := range reqs {
			if err := supports(ip, ir); err != nil {
				return zero, inputError(r.serverOf(c), "input-unsupported", fmt.Sprintf("input request %q: %v", id, err))
			}
		}
		return res, nil
	}
	shed := 0
	for round := 1; ; round++ {
		res, err := send(ctx, in)
		if err != nil {
			return zero, err
		}
		reqs, state := pending(res)
		if reqs == nil {
			return res, nil
		}
		server := r.serverOf(c)
		if len(reqs) == 0 {
			shed++
		} else {
			shed = 0
		}
		switch {
		case round >= MaxInputRounds:
			return zero, inputError(server, "input-rounds", fmt.Sprintf("still asks for input after %d rounds", round))
		case shed >= MaxShedRounds:
			return zero, inputError(server, "input-rounds", fmt.Sprintf("asked for nothing %d rounds in a row", shed))
		case len(reqs) > MaxInputRequests:
			return zero, inputError(server, "input-rounds", fmt.Sprintf("asks for %d inputs in one round, more than %d", len(reqs), MaxInputRequests))
		}
		in = input{responses: make(mcp.InputResponseMap, len(reqs)), state: state}
		for id, ir := range reqs {
			if err := supports(ip, ir); err != nil {
				return zero, inputError(server, "input-unsupported", fmt.Sprintf("input request %q: %v", id, err))
			}
			resp, err := r.ask(ctx, c, ss, ir)
			if err != nil {
				return zero, inputError(server, "input-failed", fmt.Sprintf("input request %q: %v", id, err))
			}
			in.responses[id] = resp
		}
	}
}

// takesInputRequired reports whether the client of ip takes an
// InputRequiredResult: a 2026-07-28 one does (as go-sdk's server decides,
// one that has not said its version is taken to speak the latest).
func takesInputRequired(ip *mcp.InitializeParams) bool {
	return ip == nil || ip.ProtocolVersion >= protocol2026
}

// supports says why the client of ip cannot take the input request ir, or
// nil when it can (its capabilities as it declared them; roots/list is
// always answered: with no roots when it declared none).
func supports(ip *mcp.InitializeParams, ir mcp.InputRequest) error {
	var caps *mcp.ClientCapabilities
	if ip != nil {
		caps = ip.Capabilities
	}
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		if caps == nil || caps.Elicitation == nil {
			return fmt.Errorf("elicitation/create: the client does not support elicitation")
		}
		if p.Mode == "url" && caps.Elicitation.URL == nil {
			return fmt.Errorf(`elicitation/create: the client does not support "url" elicitation`)
		}
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		if caps == nil || caps.Sampling == nil {
			return fmt.Errorf("sampling/createMessage: the client does not support sampling")
		}
	case *mcp.ListRootsParams:
	default:
		return fmt.Errorf("an input request of type %T", ir)
	}
	return nil
}

// ask sends the input request ir to ss, the 2025-era client of the call c,
// as the server request it names, bounded as every relayed request
// (relayed).
func (r *relay) ask(ctx context.Context, c *call, ss *mcp.ServerSession, ir mcp.InputRequest) (mcp.InputResponse, error) {
	if c == nil {
		c = &call{session: ss, turn: make(chan struct{}, 1)}
	}
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		return relayed(r, ctx, c, func(ctx context.Context) (*mcp.ElicitResult, error) { return ss.Elicit(ctx, p) })
	case *mcp.CreateMessageParams:
		return relayed(r, ctx, c, func(ctx context.Context) (*mcp.CreateMessageResult, error) { return ss.CreateMessage(ctx, p) })
	case *mcp.CreateMessageWithToolsParams:
		return relayed(r, ctx, c, func(ctx context.Context) (*mcp.CreateMessageWithToolsResult, error) {
			return ss.CreateMessageWithTools(ctx, p)
		})
	case *mcp.ListRootsParams:
		ip := ss.InitializeParams()
		if ip == nil || ip.Capabilities == nil || (ip.Capabilities.RootsV2 == nil && !ip.Capabilities.Roots.ListChanged) {
			return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
		}
		return relayed(r, ctx, c, func(ctx context.Context) (*mcp.ListRootsResult, error) { return ss.ListRoots(ctx, p) })
	}
	return nil, fmt.Errorf("an input request of type %T", ir)
}

// serverOf names the server the call c went to ("" before it was sent).
func (r *relay) serverOf(c *call) string {
	if c == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return c.server
}

// inputError is the -32603 (Internal error) a call fails with when the
// gateway cannot carry its server's input requests to its client; the data
// names the server and the class (the call was answered: delivery
// "answered").
func inputError(server, class, why string) error {
	return wireError(CodeInternalError, fmt.Sprintf("gateway: server %q: %s", server, why),
		ErrorData{Server: server, Class: class, Delivery: supervisor.Answered.String()})
}

func pendingTool(r *mcp.CallToolResult) (mcp.InputRequestMap, string) {
	return r.InputRequests, r.RequestState
}

func pendingPrompt(r *mcp.GetPromptResult) (mcp.InputRequestMap, string) {
	return r.InputRequests, r.RequestState
}

func pendingResource(r *mcp.ReadResourceResult) (mcp.InputRequestMap, string) {
	return r.InputRequests, r.RequestState
}

func inputTool(m mcp.InputRequestMap, state string) *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: m, RequestState: state}
}

func inputPrompt(m mcp.InputRequestMap, state string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{InputRequests: m, RequestState: state}
}

func inputResource(m mcp.InputRequestMap, state string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{InputRequests: m, RequestState: state}
}

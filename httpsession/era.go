package httpsession

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/msgcheck"
)

// JSON-RPC error codes of the 2026-07-28 era (MCP SEP-2575) that refuse a
// request's protocol version or headers: a server that answers
// `server/discover` with one of them is not (or not at this version) a
// 2026-07-28 server, and the client falls back to `initialize`.
const (
	// CodeHeaderMismatch is -32020: the Mcp-* headers do not match the body.
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapabilities is -32021.
	CodeMissingRequiredClientCapabilities = -32021
	// CodeUnsupportedProtocolVersion is -32022: the server does not speak
	// the request's protocol version (a server rolled back to 2025 answers
	// every 2026-07-28 request with it, in a 400).
	CodeUnsupportedProtocolVersion = -32022
)

// EraRefusal reports whether x is an answer that refuses the 2026-07-28
// era: HTTP 400 whose JSON-RPC error is -32020, -32021 or -32022.
func EraRefusal(x Exchange) bool {
	if x.Status != http.StatusBadRequest || !x.RPC.Present {
		return false
	}
	switch x.RPC.Code {
	case CodeHeaderMismatch, CodeMissingRequiredClientCapabilities, CodeUnsupportedProtocolVersion:
		return true
	}
	return false
}

// VersionRefusal reports whether x refuses the request's protocol version:
// HTTP 400 with JSON-RPC -32022. On a live 2026-07-28 session it tells of a
// server rolled back to 2025; -32020 and -32021 refuse one request (its
// headers, a capability a tool needs), not the era.
func VersionRefusal(x Exchange) bool {
	return x.Status == http.StatusBadRequest && x.RPC.Present && x.RPC.Code == CodeUnsupportedProtocolVersion
}

// LegacyRefusal reports whether x, the answer to a request of the 2025 era
// (an `initialize`, or a request of a session that negotiated 2025-11-25),
// is a recognized modern error, which identifies a server of the 2026-07-28
// era or later (MCP 2026-07-28, basic/transports/streamable-http.mdx,
// "Backward Compatibility"): HTTP 400 with JSON-RPC -32022 (the request's
// protocol version is not supported: "Protocol Version Header") or -32020
// (its required headers are missing: "Server Validation", which a legacy
// request fails), or, to `initialize`, 404 with -32601 (the method is not
// implemented). -32021 refuses one request (a capability it needs), not
// the era.
func LegacyRefusal(x Exchange) bool {
	if !x.RPC.Present {
		return false
	}
	switch x.Status {
	case http.StatusBadRequest:
		return x.RPC.Code == CodeUnsupportedProtocolVersion || x.RPC.Code == CodeHeaderMismatch
	case http.StatusNotFound:
		return x.Method == methodInitialize && x.RPC.Code == classify.CodeMethodNotFound
	}
	return false
}

// DiscoverOutage reports whether x, the answer to a `server/discover`,
// says nothing about the era: no HTTP answer (refused, reset), an event
// stream that broke or ended before its response ([Exchange.StreamLost]:
// MCP 2026-07-28 changelog item 9, "A broken response stream loses the
// in-flight request; clients MUST re-issue it"), or 408, 429 or a 5xx
// other than 501 (a gateway whose server restarts). go-sdk v1.8.0 falls
// back to `initialize` 2025-11-25 on any error of the discover
// (mcp/client.go Connect), which would take a passing outage of a
// 2026-07-28 server for "2025 only".
func DiscoverOutage(x Exchange) bool {
	return x.TransportErr != nil || x.StreamLost || outageStatus(x.Status)
}

// ErrDiscoverOutage is matched (errors.Is) by every [*DiscoverOutageError].
var ErrDiscoverOutage = errors.New("mcpsup/httpsession: server/discover got no answer")

// DiscoverOutageError is the error the [Transport] fails go-sdk's fallback
// `initialize` with when the `server/discover` before it met an outage
// ([DiscoverOutage]) and [Config.FallbackAfterOutage] is not set: the
// handshake fails and is retried as a whole, on the supervisor's backoff,
// rather than settling for the 2025 era. Discover is the discover's record.
type DiscoverOutageError struct {
	Discover Exchange
}

func (e *DiscoverOutageError) Error() string {
	what := "no HTTP answer"
	if e.Discover.Status != 0 {
		what = fmt.Sprintf("HTTP %d", e.Discover.Status)
	}
	if e.Discover.TransportErr != nil {
		what += " (" + e.Discover.TransportErr.Error() + ")"
	}
	return "mcpsup/httpsession: server/discover got " + what + "; not falling back to initialize on an outage"
}

// Is reports target == ErrDiscoverOutage.
func (e *DiscoverOutageError) Is(target error) bool { return target == ErrDiscoverOutage }

// Unwrap returns the discover's transport error, if any.
func (e *DiscoverOutageError) Unwrap() error { return e.Discover.TransportErr }

// noteDiscover keeps the record of the session's `server/discover`.
func (t *Transport) noteDiscover(x Exchange) {
	if x.Method != methodDiscover || x.Local {
		return
	}
	t.mu.Lock()
	t.discover = &x
	t.mu.Unlock()
}

// amendDiscover amends the kept record of the `server/discover` of
// request id requestID with f: its event-stream answer failed after the
// headers were recorded (see [answerStream.end]).
func (t *Transport) amendDiscover(requestID string, f func(*Exchange)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.discover != nil && t.discover.RequestID == requestID {
		f(t.discover)
	}
}

// DiscoverExchange returns the record of the `server/discover` this
// Transport sent, and whether it sent one (a 2025-era handshake and a
// resume send none).
func (t *Transport) DiscoverExchange() (Exchange, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.discover == nil {
		return Exchange{}, false
	}
	return *t.discover, true
}

// refuseFallback fails go-sdk's fallback `initialize` after a discover that
// met an outage (see [DiscoverOutageError]); x is the initialize's record.
func (t *Transport) refuseFallback(x *Exchange) error {
	if x.Method != methodInitialize || t.cfg.FallbackAfterOutage {
		return nil
	}
	d, ok := t.DiscoverExchange()
	if !ok || !DiscoverOutage(d) {
		return nil
	}
	err := &DiscoverOutageError{Discover: d}
	x.Local, x.TransportErr = true, err
	t.mu.Lock()
	t.outage = err
	t.mu.Unlock()
	return err
}

// handshakeError annotates the error of go-sdk's Connect with the wire
// facts of the handshake. When the fallback `initialize` was refused after
// a discover outage, those are the discover's, whatever go-sdk returned (a
// handshake whose context ended returns the context's error): the
// initialize never left, and the verdict, so the retry (a 429's
// Retry-After), rests on what the server answered. The error wraps the
// [*DiscoverOutageError].
func (t *Transport) handshakeError(ctx context.Context, err error) error {
	t.mu.Lock()
	oe := t.outage
	t.mu.Unlock()
	if oe != nil {
		return &classify.HTTPError{Exchange: oe.Discover, Err: oe}
	}
	return Annotate(ctx, err)
}

// resumesStreams reports whether a request sent with protocol version v
// (its Mcp-Protocol-Version header; "" before a handshake settled one)
// may have its broken answer stream resumed with a GET carrying
// Last-Event-ID. It is the one place where the era decides the stream
// rules:
//   - 2025-11-25 (and before): yes (2025-11-25 transports, "Resumability
//     and Redelivery");
//   - 2026-07-28 and later: no. The changelog's item 9 (SEP-2575) removed
//     SSE resumability ("the Last-Event-ID header and SSE event IDs") and
//     says "A broken response stream loses the in-flight request; clients
//     MUST re-issue it as a new request with a new request ID"; the
//     transport page: "Resumable SSE streams via Last-Event-ID are not
//     supported". Such a stream's loss is marked on the request's record
//     ([Exchange.StreamLost]) for the caller to re-issue the request.
func resumesStreams(v string) bool { return !msgcheck.ModernVersion(v) }

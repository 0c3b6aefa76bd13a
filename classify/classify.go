package classify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/bits"
	"net"
	"net/url"
	"os"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the walk and the text scan.
const (
	MaxDepth         = 64       // levels of wrapping the walk descends
	MaxNodes         = 512      // error values the walk visits
	MaxScan          = 64 << 10 // bytes of text searched for an embedded JSON-RPC error
	maxEmbeddedTries = 16       // JSON decode attempts in one message
)

const codeRejected = -32005 // go-sdk's internal "rejected by transport"

// Codes of JSON-RPC errors that decide a class.
const (
	CodeMethodNotFound = jsonrpc.CodeMethodNotFound // -32601
	// CodeServerError is JSON-RPC's generic server error (the TypeScript
	// and Python SDK servers' answer to an unknown session, null id).
	CodeServerError = -32000
)

// ErrDeadline is the cause (context.WithTimeoutCause) of a context whose
// deadline is the library's own bound on the server: [Classify] reads a
// context done with it, and an error wrapping it, as timeout.
var ErrDeadline = errors.New("classify: our own deadline passed")

// Classify returns the verdict for err. ctx, the caller's context or nil,
// only tells canceled from timeout and transport (see the package doc). A
// nil err gives the zero Verdict whatever ctx says. It never panics on
// hostile errors and is safe for concurrent use.
func Classify(ctx context.Context, err error) Verdict {
	if err == nil {
		return Verdict{}
	}
	var f facts
	f.collect(err)
	callerDone := ctx != nil && ctx.Err() != nil
	if callerDone && errors.Is(context.Cause(ctx), ErrDeadline) {
		// Our own deadline, not the caller: what the wire saw decides first.
		f.name(Timeout)
		callerDone = false
	}
	v := f.verdict(ctx != nil && !callerDone)
	if callerDone {
		v.Class = Canceled
	}
	return v
}

// facts are what one error tree says, by [facts.collect].
type facts struct {
	detail string

	wires     []*HTTPError // HTTPErrors with a status, in walk order
	wireNoAns *HTTPError   // first HTTPError without a status

	// named holds the classes error values name by themselves, a bit per
	// Class: mcp.ErrSessionMissing, a timeout, a malformed answer or
	// ErrProtocol, evidence of no answer (net, syscall, io, a closed
	// connection, an HTTPError without a status).
	named      uint32
	rpc        RPCError   // go-sdk JSON-RPC error other than -32005: first, or a -32601
	rejected   bool       // go-sdk -32005 seen
	connClosed bool       // mcp.ErrConnectionClosed
	canceled   bool       // context.Canceled
	notSent    bool       // a *NotSentError: the request left no exchange
	sent       *HTTPError // the first *HTTPError: the wire layer saw the request
	written    bool       // a *WrittenError: written whole to a stream
	refused    bool       // ECONNREFUSED: the server took no connection
}

func (f *facts) name(c Class) { f.named |= 1 << c }

// inspect records what one error value says by itself.
func (f *facts) inspect(err error) {
	defer func() { _ = recover() }() // a hostile Timeout method

	switch w := answerOf(err); {
	case err == context.Canceled:
		f.canceled = true
	case err == context.DeadlineExceeded, err == os.ErrDeadlineExceeded, err == ErrDeadline:
		f.name(Timeout)
	case err == mcp.ErrSessionMissing:
		f.name(SessionExpired)
	case err == mcp.ErrConnectionClosed:
		f.connClosed = true
		f.name(Transport)
	case err == ErrCredential:
		f.wires = append(f.wires, &HTTPError{Exchange: Exchange{Status: 401}, Err: err})
	case err == io.EOF, err == io.ErrUnexpectedEOF, err == io.ErrClosedPipe:
		f.name(Transport)
	case err == ErrProtocol, roundsExceeded(err):
		f.name(Protocol)
	case w != nil:
		f.wires = append(f.wires, w)
	default:
		f.inspectType(err)
	}
}

func (f *facts) inspectType(err error) {
	switch e := err.(type) {
	case *NotSentError:
		f.notSent = e != nil
	case *HTTPError:
		if e == nil {
			return
		}
		if f.sent == nil {
			f.sent = e
		}
		if e.Status != 0 {
			f.wires = append(f.wires, e)
		} else if f.wireNoAns == nil {
			f.wireNoAns = e
			f.name(Transport)
		}
	case *jsonrpc.Error:
		if e == nil {
			return
		}
		if e.Code == codeRejected {
			f.rejected = true
		} else if !f.rpc.Present || (e.Code == CodeMethodNotFound && f.rpc.Code != CodeMethodNotFound) {
			// The first, unless a later one is -32601; go-sdk makes one
			// only from a response with an id.
			f.rpc = RPCError{Present: true, Code: e.Code, Message: cut(e.Message, MaxDetail), HasID: true}
		}
	case *WrittenError:
		f.written = e != nil
	case syscall.Errno:
		f.refused = f.refused || e == syscall.ECONNREFUSED
		switch e {
		case syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
			syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN:
			f.name(Transport)
		case syscall.ETIMEDOUT:
			f.name(Timeout)
		}
	case *json.SyntaxError, *json.UnmarshalTypeError:
		f.name(Protocol)
	case *url.Error: // http.Client.Do got no answer; what it wraps may say more
		if e != nil {
			f.name(Transport)
		}
	case net.Error:
		if e.Timeout() {
			f.name(Timeout)
		} else {
			f.name(Transport)
		}
	}
}

// verdict takes the first class (in declaration order) any fact names.
// callerLive reports that a caller's context was given and is not done.
func (f *facts) verdict(callerLive bool) Verdict {
	v := Verdict{Detail: cut(f.detail, MaxDetail), RPC: f.rpc}

	best := numClasses // no class yet
	consider := func(c Class) {
		if c != None && c < best {
			best = c
		}
	}
	var decider *HTTPError // the exchange whose class comes first
	for _, w := range f.wires {
		if c := wireClass(w, f.rpc); c != None && c < best {
			best, decider = c, w
		}
	}
	if f.canceled && callerLive { // not the caller's doing: the connection went away
		consider(Transport)
	} else if f.canceled {
		consider(Canceled)
	}
	if f.rpc.Present {
		consider(rpcClass(f.rpc))
	}
	consider(Class(bits.TrailingZeros32(f.named))) // the first named; none is 32, no class
	if !f.rpc.Present && len(f.wires) == 0 && !f.connClosed {
		// The one text parse; a closed connection's text is history.
		if r, ok := embeddedRPCError(f.detail); ok {
			v.RPC = r
			consider(rpcClass(r))
		}
	}
	switch {
	case best < numClasses:
	case f.rejected: // go-sdk's -32005 alone (its 500/502/503/504 and 429)
		best = ServerError
	case f.notSent && len(f.wires) == 0 && f.wireNoAns == nil:
		best = Transport
	default:
		best = Unknown
	}
	v.Class = best

	w := decider
	if w == nil && len(f.wires) > 0 {
		w = f.wires[0]
	}
	if w != nil {
		v.HTTPStatus = w.Status
		v.RetryAfter = CapRetryAfter(w.RetryAfter)
		v.Method = w.Method
		v.SessionIDSent = w.SessionIDSent
		if w.RPC.Present {
			v.RPC = w.RPC
		}
	} else if w := f.wireNoAns; w != nil {
		v.Method = w.Method
		v.SessionIDSent = w.SessionIDSent
	}
	return v
}

// rpcClass is the class of a JSON-RPC error without HTTP facts.
func rpcClass(r RPCError) Class {
	if r.Code == CodeMethodNotFound {
		return MethodNotFound
	}
	return Application
}

// Error is Classify with a nil context: for an error no caller waits on
// (a session that ended by itself).
func Error(err error) Verdict {
	var none context.Context
	return Classify(none, err)
}

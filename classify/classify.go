package classify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the walk and the text scan.
const (
	// MaxDepth is the deepest level of wrapping the walk descends to.
	MaxDepth = 64
	// MaxNodes is the most error values the walk visits.
	MaxNodes = 512
	// MaxScan is the most bytes of message text searched for an embedded
	// JSON-RPC error object.
	MaxScan = 64 << 10
	// maxEmbeddedTries bounds the JSON decode attempts in one message.
	maxEmbeddedTries = 16
)

// codeRejected is go-sdk's internal "rejected by transport" code.
const codeRejected = -32005

// Codes of JSON-RPC errors that decide a class.
const (
	CodeMethodNotFound = jsonrpc.CodeMethodNotFound // -32601
	// CodeServerError is -32000, the generic server error of JSON-RPC's
	// implementation-defined range, which the TypeScript and Python SDK
	// servers send with a null id for an unknown session.
	CodeServerError = -32000
)

// ErrDeadline is the cause (context.WithTimeoutCause, context.Cause) of a
// context whose deadline is the library's own bound on the server, not a
// caller giving up: a discovery, probe, call or keepalive timeout. A
// context done with it (or with a cause that wraps it) is read by
// [Classify] as timeout, where any other done context is canceled; an
// error that wraps it is timeout as a context.DeadlineExceeded is.
var ErrDeadline = errors.New("classify: our own deadline passed")

// Classify returns the verdict for err. ctx is the context of the caller on
// whose behalf the failed call was made, or nil when none is at hand; it is
// used only to tell canceled from timeout and transport (see the package
// doc). A context of our own deadline may be passed when its deadline was
// made with the cause [ErrDeadline]: done by that deadline, it says
// timeout, not canceled. A nil err gives the zero Verdict (class [None])
// whatever ctx says.
//
// Classify never panics on hostile errors (see the package doc for the one
// thing it cannot guard), visits at most [MaxNodes] error values and reads at
// most [MaxScan] bytes of message text. It is safe for concurrent use.
func Classify(ctx context.Context, err error) Verdict {
	if err == nil {
		return Verdict{}
	}
	var f facts
	f.collect(err)
	callerDone := ctx != nil && ctx.Err() != nil
	if callerDone && errors.Is(context.Cause(ctx), ErrDeadline) {
		// Our own deadline ended the context, not the caller: the server
		// was slow. What the wire saw before still decides first.
		f.deadline, callerDone = true, false
	}
	v := f.verdict(ctx != nil && !callerDone)
	if callerDone {
		v.Class = Canceled
	}
	return v
}

// facts gathered from one error tree.
type facts struct {
	detail string

	wires     []*HTTPError // HTTPErrors with a status, in walk order
	wireNoAns *HTTPError   // first HTTPError without a status

	rpc         RPCError // go-sdk JSON-RPC error other than -32005: first, or a -32601
	rejected    bool     // go-sdk -32005 seen
	sessionGone bool     // mcp.ErrSessionMissing
	connClosed  bool     // mcp.ErrConnectionClosed
	canceled    bool     // context.Canceled
	deadline    bool     // context.DeadlineExceeded or a net timeout
	transport   bool     // net, syscall or io evidence of no answer
	malformed   bool     // JSON decoding of a response failed
	notSent     bool     // a *NotSentError: the request left no exchange
}

// inspect records what one error value says by itself.
func (f *facts) inspect(err error) {
	defer func() { _ = recover() }() // a hostile Timeout method

	switch err {
	case context.Canceled:
		f.canceled = true
		return
	case context.DeadlineExceeded, os.ErrDeadlineExceeded, ErrDeadline:
		f.deadline = true
		return
	case mcp.ErrSessionMissing:
		f.sessionGone = true
		return
	case mcp.ErrConnectionClosed:
		f.connClosed = true
		return
	case ErrCredential:
		f.wires = append(f.wires, &HTTPError{Exchange: Exchange{Status: 401}, Err: err})
		return
	case io.EOF, io.ErrUnexpectedEOF, io.ErrClosedPipe:
		f.transport = true
		return
	}
	if w := answerOf(err); w != nil {
		f.wires = append(f.wires, w)
		return
	}
	switch e := err.(type) {
	case *NotSentError:
		f.notSent = e != nil
	case *HTTPError:
		if e == nil {
			return
		}
		if e.Status != 0 {
			f.wires = append(f.wires, e)
		} else if f.wireNoAns == nil {
			f.wireNoAns = e
		}
	case *jsonrpc.Error:
		if e == nil {
			return
		}
		if e.Code == codeRejected {
			f.rejected = true
		} else if !f.rpc.Present || (e.Code == CodeMethodNotFound && f.rpc.Code != CodeMethodNotFound) {
			// The first one, unless a later one is -32601, which decides
			// wherever it is. go-sdk builds a *jsonrpc.Error only from a
			// response with an id.
			f.rpc = RPCError{Present: true, Code: e.Code, Message: cut(e.Message, MaxDetail), HasID: true}
		}
	case syscall.Errno:
		switch e {
		case syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
			syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN:
			f.transport = true
		case syscall.ETIMEDOUT:
			f.deadline = true
		}
	case *json.SyntaxError, *json.UnmarshalTypeError:
		f.malformed = true
	case *url.Error:
		// http.Client.Do failed: the request got no HTTP answer (DNS, TLS,
		// refused, reset). What it wraps may say more (a timeout).
		if e != nil {
			f.transport = true
		}
	case net.Error:
		if e.Timeout() {
			f.deadline = true
		} else {
			f.transport = true
		}
	}
}

// verdict applies the precedence of the package doc. callerLive reports that
// a caller's context was given and is not done.
func (f *facts) verdict(callerLive bool) Verdict {
	v := Verdict{Detail: cut(f.detail, MaxDetail), RPC: f.rpc}

	best := numClasses // no class yet
	consider := func(c Class) {
		if c != None && c < best {
			best = c
		}
	}
	// Each HTTP exchange is classified on its own; the one whose class comes
	// first decides, and its facts go into the verdict.
	var decider *HTTPError
	for _, w := range f.wires {
		if c := wireClass(w, f.rpc); c != None && c < best {
			best, decider = c, w
		}
	}
	if f.canceled {
		if callerLive {
			// The caller still waits, so someone else canceled the request:
			// the connection went away under it.
			consider(Transport)
		} else {
			consider(Canceled)
		}
	}
	if f.rpc.Present {
		consider(rpcClass(f.rpc))
	}
	if f.sessionGone {
		consider(SessionExpired)
	}
	if f.malformed {
		consider(Protocol)
	}
	if f.deadline {
		consider(Timeout)
	}
	if f.transport || f.connClosed || f.wireNoAns != nil {
		consider(Transport)
	}
	if !f.rpc.Present && len(f.wires) == 0 && !f.connClosed {
		// The one text parse: a JSON-RPC error object printed into the
		// message. A closed connection sent nothing, so its text is history.
		if r, ok := embeddedRPCError(f.detail); ok {
			v.RPC = r
			consider(rpcClass(r))
		}
	}
	if best == numClasses && f.rejected {
		// go-sdk's -32005 alone: the transport refused the request without
		// saying why; go-sdk uses it for 500/502/503/504 and 429.
		best = ServerError
	}
	if best == numClasses && f.notSent && len(f.wires) == 0 && f.wireNoAns == nil {
		// go-sdk refused the request unsent, with nothing else to say: its
		// connection had failed.
		best = Transport
	}
	if best == numClasses {
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

// Error classifies err when no caller's context is at hand, e.g. the cause
// of a session that ended by itself: context.Canceled in err is then
// canceled and a deadline is timeout. It is Classify with a nil context.
func Error(err error) Verdict {
	var none context.Context
	return Classify(none, err)
}

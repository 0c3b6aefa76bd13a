package classify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"reflect"
	"strings"
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

// Classify returns the verdict for err. ctx is the caller's context, or nil
// when none is at hand; it is used only to tell canceled from timeout (see the
// package doc). Classify never panics and runs in time bounded by [MaxNodes]
// and [MaxScan]. It is safe for concurrent use.
func Classify(ctx context.Context, err error) Verdict {
	if err == nil {
		return Verdict{}
	}
	var f facts
	f.collect(err)
	v := f.verdict()
	if ctx != nil && ctx.Err() != nil {
		v.Class = Canceled
	}
	return v
}

// facts gathered from one error tree.
type facts struct {
	detail string

	wire      *HTTPError // first HTTPError with a status
	wireNoAns *HTTPError // first HTTPError without a status

	rpc         RPCError // first JSON-RPC error other than -32005
	rejected    bool     // go-sdk -32005 seen
	sessionGone bool     // mcp.ErrSessionMissing
	connClosed  bool     // mcp.ErrConnectionClosed
	canceled    bool     // context.Canceled
	deadline    bool     // context.DeadlineExceeded or a net timeout
	transport   bool     // net, syscall or io evidence of no answer
	malformed   bool     // JSON decoding of a response failed
}

func (f *facts) collect(root error) {
	f.detail = safeText(root)

	type item struct {
		err   error
		depth int
	}
	stack := []item{{root, 0}}
	seen := make(map[identity]struct{})
	for n := 0; len(stack) > 0 && n < MaxNodes; n++ {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id, ok := identify(it.err); ok {
			if _, dup := seen[id]; dup {
				continue
			}
			seen[id] = struct{}{}
		}
		f.inspect(it.err)
		if it.depth >= MaxDepth {
			continue
		}
		kids := children(it.err)
		// Push in reverse so the first child is visited first.
		for i := len(kids) - 1; i >= 0; i-- {
			if kids[i] != nil {
				stack = append(stack, item{kids[i], it.depth + 1})
			}
		}
	}
	if !f.rpc.Present && f.wire == nil {
		if r, ok := embeddedRPCError(f.detail); ok {
			f.rpc = r
		}
	}
}

// inspect records what one error value says by itself.
func (f *facts) inspect(err error) {
	defer func() { _ = recover() }() // a hostile Timeout or Is method

	switch err {
	case context.Canceled:
		f.canceled = true
		return
	case context.DeadlineExceeded, os.ErrDeadlineExceeded:
		f.deadline = true
		return
	case mcp.ErrSessionMissing:
		f.sessionGone = true
		return
	case mcp.ErrConnectionClosed:
		f.connClosed = true
		return
	case io.EOF, io.ErrUnexpectedEOF:
		f.transport = true
		return
	}
	switch e := err.(type) {
	case *HTTPError:
		if e == nil {
			return
		}
		if e.Status != 0 {
			if f.wire == nil {
				f.wire = e
			}
		} else if f.wireNoAns == nil {
			f.wireNoAns = e
		}
	case *jsonrpc.Error:
		if e == nil {
			return
		}
		if e.Code == codeRejected {
			f.rejected = true
		} else if !f.rpc.Present {
			// go-sdk builds a *jsonrpc.Error only from a response with an id.
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
		// A wrapper; what it wraps decides.
	case net.Error:
		if e.Timeout() {
			f.deadline = true
		} else {
			f.transport = true
		}
	}
}

// verdict applies the precedence of the package doc.
func (f *facts) verdict() Verdict {
	v := Verdict{Detail: cut(f.detail, MaxDetail), RPC: f.rpc}
	if w := f.wire; w != nil {
		v.HTTPStatus = w.Status
		v.RetryAfter = w.RetryAfter
		v.Method = w.Method
		v.SessionIDSent = w.SessionIDSent
		if w.RPC.Present {
			v.RPC = w.RPC
		}
	} else if w := f.wireNoAns; w != nil {
		v.Method = w.Method
		v.SessionIDSent = w.SessionIDSent
	}
	switch {
	case f.canceled && !f.deadline && f.wire == nil:
		// Canceled while no answer came. Whether it was the caller is
		// settled by Classify with the caller's context.
		v.Class = Canceled
	case f.wire != nil:
		v.Class = wireClass(f.wire)
	case f.rpc.Present && f.rpc.Code == CodeMethodNotFound:
		v.Class = MethodNotFound
	case f.sessionGone:
		v.Class = SessionExpired
	case f.rpc.Present:
		v.Class = Application
	case f.malformed:
		v.Class = Protocol
	case f.deadline:
		v.Class = Timeout
	case f.transport, f.connClosed, f.wireNoAns != nil:
		v.Class = Transport
	case f.rejected:
		v.Class = ServerError
	default:
		v.Class = Unknown
	}
	return v
}

// wireClass classifies one HTTP exchange (DESIGN.md section 3).
func wireClass(w *HTTPError) Class {
	s := w.Status
	switch {
	case s == 401:
		return Unauthorized
	case s == 403 && insufficientScope(w.WWWAuthenticate):
		return Unauthorized
	case w.RPC.Present && w.RPC.Code == CodeMethodNotFound:
		return MethodNotFound
	case s == 404 && w.SessionIDSent && !w.RespondsToRequest():
		// MCP transports, session management: the server MUST answer a
		// request with an unknown session id with 404.
		return SessionExpired
	case s >= 400 && s < 500 && w.SessionIDSent && w.RPC.Present &&
		w.RPC.Code == CodeServerError && !w.RPC.HasID:
		// The TypeScript and Python SDK servers: 400 with a null-id -32000.
		return SessionExpired
	case s == 429:
		return RateLimited
	case s == 403:
		return Forbidden
	case s >= 500 && s < 600:
		return ServerError
	case s >= 200 && s < 300 && w.Malformed:
		return Protocol
	case s >= 200 && s < 300 && w.RPC.Present:
		return Application
	case s >= 200 && s < 300:
		// A successful exchange that the call still failed on: the facts of
		// the error it wraps are all we know.
		return Unknown
	default:
		// Any other status, including 404 without a session id: a proxy or
		// a stateless server, where a new session would not help, so it must
		// never feed a reconnect loop.
		return Application
	}
}

// insufficientScope reports whether a WWW-Authenticate challenge carries
// error="insufficient_scope" (RFC 6750 section 3.1). It parses the
// auth-params; it does not search the text.
func insufficientScope(h string) bool {
	for _, p := range authParams(h) {
		if strings.EqualFold(p[0], "error") && p[1] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// authParams splits a challenge list into name=value pairs, dropping scheme
// tokens and unquoting quoted values.
func authParams(h string) [][2]string {
	var out [][2]string
	for len(h) > 0 && len(out) < 64 {
		h = strings.TrimLeft(h, " \t,")
		i := strings.IndexAny(h, "= \t,")
		if i < 0 {
			break
		}
		name := h[:i]
		rest := strings.TrimLeft(h[i:], " \t")
		if !strings.HasPrefix(rest, "=") {
			h = h[i:] // a scheme token
			if len(strings.TrimLeft(h, " \t,")) == len(h) {
				h = h[1:]
			}
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t")
		var val string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			j := 1
			for ; j < len(rest) && rest[j] != '"'; j++ {
				if rest[j] == '\\' && j+1 < len(rest) {
					j++
				}
				b.WriteByte(rest[j])
			}
			val = b.String()
			if j < len(rest) {
				j++
			}
			h = rest[j:]
		} else {
			j := strings.IndexAny(rest, " \t,")
			if j < 0 {
				j = len(rest)
			}
			val = rest[:j]
			h = rest[j:]
		}
		out = append(out, [2]string{name, val})
	}
	return out
}

// identity is a visited-set key: a type and an address.
type identity struct {
	t reflect.Type
	p uintptr
}

// identify returns the identity of errors that can take part in a cycle:
// pointers and other reference kinds. Value errors cannot close a cycle by
// themselves and may not be comparable, so they get none.
func identify(err error) (identity, bool) {
	v := reflect.ValueOf(err)
	switch v.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Chan, reflect.Func, reflect.Slice:
		return identity{v.Type(), v.Pointer()}, true
	}
	return identity{}, false
}

// children returns what err wraps, recovering from a panicking Unwrap.
func children(err error) (kids []error) {
	defer func() {
		if recover() != nil {
			kids = nil
		}
	}()
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		return u.Unwrap()
	case interface{ Unwrap() error }:
		return []error{u.Unwrap()}
	}
	return nil
}

// safeText returns err.Error() cut to MaxScan bytes, or a placeholder when
// Error panics.
func safeText(err error) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("%T (Error panicked)", err)
		}
	}()
	return cut(err.Error(), MaxScan)
}

// cut returns s cut to at most n bytes, not splitting a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// embeddedRPCError finds a JSON-RPC error object embedded in message text,
// e.g. `Error POSTing to endpoint: {"jsonrpc":"2.0","id":3,"error":{...}}`,
// and decodes it as JSON. At most maxEmbeddedTries candidates are decoded.
func embeddedRPCError(text string) (RPCError, bool) {
	tries := 0
	for i := 0; i < len(text) && tries < maxEmbeddedTries; {
		j := strings.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		i = start + 1
		rest := strings.TrimLeft(text[i:], " \t\r\n")
		if !strings.HasPrefix(rest, `"`) {
			continue
		}
		tries++
		if r, ok := ParseRPCError([]byte(text[start:])); ok {
			return r.RPCError, true
		}
	}
	return RPCError{}, false
}

// BodyRPCError is a JSON-RPC error response decoded from bytes.
type BodyRPCError struct {
	RPCError
	// ID is the response's id as raw JSON: "" when absent, "null" when null.
	ID string
}

// ParseRPCError decodes the first JSON value in b as a JSON-RPC 2.0 error
// response ({"jsonrpc":"2.0","id":...,"error":{"code":...,"message":...}}).
// Trailing bytes after the value are ignored. It reports false for anything
// else. The wire layer uses it on response bodies.
func ParseRPCError(b []byte) (BodyRPCError, bool) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    *int64 `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&m); err != nil {
		return BodyRPCError{}, false
	}
	if m.JSONRPC != "2.0" || m.Error == nil || m.Error.Code == nil {
		return BodyRPCError{}, false
	}
	id := strings.TrimSpace(string(m.ID))
	return BodyRPCError{
		RPCError: RPCError{
			Present: true,
			Code:    *m.Error.Code,
			Message: cut(m.Error.Message, MaxDetail),
			HasID:   id != "" && id != "null",
		},
		ID: id,
	}, true
}

var _ = errors.Is // errors is used by tests and examples in this package

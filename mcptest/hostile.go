package mcptest

import (
	"bytes"
	"compress/gzip"
	"io"
	"maps"
	"net/http"
	"strings"
)

// Placeholders a [Template], [JSONBody] or [SSE] body may hold; each is
// replaced when the rule acts.
const (
	// PlaceholderID is replaced by the JSON-RPC id of the request answered,
	// as raw JSON (null when it has none).
	PlaceholderID = "$ID"
	// PlaceholderPrevID is replaced by the JSON-RPC id of the request with
	// an id the gateway saw before this one (null when none): with two calls
	// in flight, the other call's id.
	PlaceholderPrevID = "$PREV_ID"
)

// Bodies of hostile answers to a call, for [JSONBody] and [SSEMessage]
// (with the placeholders above).
const (
	// BodyWrongID is a response whose id belongs to no request.
	BodyWrongID = `{"jsonrpc":"2.0","id":"mcptest-wrong-id","result":{"content":[{"type":"text","text":"not yours"}]}}`
	// BodyPrevCall is a response carrying the previous call's id: another
	// call's result.
	BodyPrevCall = `{"jsonrpc":"2.0","id":$PREV_ID,"result":{"content":[{"type":"text","text":"not yours"}]}}`
	// BodyNoResult is a response with neither result nor error.
	BodyNoResult = `{"jsonrpc":"2.0","id":$ID}`
	// BodyNullResult is a response whose result is null.
	BodyNullResult = `{"jsonrpc":"2.0","id":$ID,"result":null}`
	// BodyNotification is a notification where the response should be.
	BodyNotification = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"not a response"}}`
	// BodyToolResult is a well-formed tools/call result for the request.
	BodyToolResult = `{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"ok"}]}}`
)

// fill replaces the placeholders in s for the exchange x.
func (x *exchange) fill(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	id, prev := string(x.msg.ID), x.prevID
	if id == "" {
		id = "null"
	}
	if prev == "" {
		prev = "null"
	}
	return strings.NewReplacer(PlaceholderPrevID, prev, PlaceholderID, id).Replace(s)
}

// Template answers like [Respond], with the placeholders ([PlaceholderID],
// [PlaceholderPrevID]) in body replaced.
func Template(status int, header http.Header, body string) Action {
	header = header.Clone()
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByGateway)
		writeRaw(x.w, status, header, []byte(x.fill(body)))
	})
}

// JSONBody answers 200 application/json with body, placeholders replaced:
// with the Body constants of this package, a response with a wrong id,
// another call's result, a missing or null result, or a notification.
func JSONBody(body string) Action {
	return Template(http.StatusOK, http.Header{"Content-Type": {"application/json"}}, body)
}

// SSE answers 200 text/event-stream and writes each line as given
// (placeholders replaced) followed by LF, flushing after each; the response
// then ends. Lines are raw: "data: {...}", "" (the blank line that ends an
// event), "id: 7", "retry: 10", a line without a colon, garbage.
func SSE(lines ...string) Action {
	lines = append([]string(nil), lines...)
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByGateway)
		h := x.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		x.w.WriteHeader(http.StatusOK)
		for _, l := range lines {
			if _, err := io.WriteString(x.w, x.fill(l)+"\n"); err != nil {
				return
			}
			x.w.Flush()
		}
	})
}

// SSEThenReset answers 200 text/event-stream with lines, as [SSE] does,
// then drops the connection with a reset, as [Reset] does: a response
// stream that breaks before its response, with no complete HTTP answer.
func SSEThenReset(lines ...string) Action {
	sse := SSE(lines...)
	return actionFunc(func(x *exchange) {
		sse.serve(x)
		dropConnection(x.w, true)
	})
}

// ServerThen passes the request to the server, discards its answer, and
// answers with next: the server ran the request, the client hears only
// next (with [SSEThenReset], a call whose stream broke after it ran).
func ServerThen(next Action) Action {
	return actionFunc(func(x *exchange) {
		x.g.next.ServeHTTP(&discardWriter{header: http.Header{}}, x.r)
		next.serve(x)
	})
}

// SSEMessage is the lines of one SSE event carrying msg: "data: <msg>" and
// the blank line, for [SSE].
func SSEMessage(msg string) []string { return []string{"data: " + msg, ""} }

// Large answers status with header and a body of size bytes: prefix
// (placeholders replaced) and then fill repeated, written as the client
// reads it, never held whole. With a Content-Type of text/event-stream and
// a prefix "data: ", it is one oversized event. The gateway stops writing
// when the client stops reading or hangs up.
func Large(status int, header http.Header, prefix string, size int64, fill byte) Action {
	header = header.Clone()
	return actionFunc(func(x *exchange) {
		x.answeredBy(ByGateway)
		h := x.w.Header()
		maps.Copy(h, header)
		if _, ok := header["Content-Type"]; !ok {
			h["Content-Type"] = nil
		}
		x.w.WriteHeader(status)
		p := x.fill(prefix)
		if _, err := io.WriteString(x.w, p); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte{fill}, 32<<10)
		ctx := x.r.Context() // ends when the client hangs up
		for left := size - int64(len(p)); left > 0 && ctx.Err() == nil; {
			n := min(left, int64(len(chunk)))
			if _, err := x.w.Write(chunk[:n]); err != nil {
				return
			}
			left -= n
		}
	})
}

// Gzip runs next with its body compressed: Content-Encoding: gzip, whatever
// the request's Accept-Encoding, flushed every MiB compressed so a client
// reads it as it is made. With [Large] it is a compression bomb (512 MiB of
// one byte compress to about 519 KiB).
func Gzip(next Action) Action {
	return actionFunc(func(x *exchange) {
		gw := &gzipWriter{recorder: x.w}
		inner := *x
		inner.w = &recorder{w: gw, log: x.w.log, entry: x.w.entry}
		next.serve(&inner)
		gw.close()
	})
}

// gzipFlushEvery is how many bytes gzipWriter compresses between flushes.
// Unflushed, the compressor holds its output until a block is full (some
// 16 MiB of one byte), so a client would read nothing of a bomb, and could
// not stop at its bound, before the server compressed that much.
const gzipFlushEvery = 1 << 20

// gzipWriter compresses what is written through it.
type gzipWriter struct {
	*recorder
	zw      *gzip.Writer
	pending int // bytes compressed since the last flush
}

func (g *gzipWriter) WriteHeader(status int) {
	g.recorder.Header().Del("Content-Length")
	g.recorder.Header().Set("Content-Encoding", "gzip")
	g.recorder.WriteHeader(status)
	g.zw = gzip.NewWriter(g.recorder)
}

func (g *gzipWriter) Write(b []byte) (int, error) {
	if g.zw == nil {
		g.WriteHeader(http.StatusOK)
	}
	n, err := g.zw.Write(b)
	g.pending += n
	if err == nil && g.pending >= gzipFlushEvery {
		g.Flush()
	}
	return n, err
}

func (g *gzipWriter) Flush() {
	if g.zw != nil {
		_ = g.zw.Flush()
	}
	g.pending = 0
	g.recorder.Flush()
}

func (g *gzipWriter) close() {
	if g.zw != nil {
		_ = g.zw.Close()
	}
}

// Redirect answers status (301, 302, 303, 307, 308) with Location: location
// and no body.
func Redirect(status int, location string) Action {
	return Respond(status, http.Header{"Location": {location}}, nil)
}

// WithHeader runs next and sets header key to value on its answer, over
// what next set: e.g. an Mcp-Session-Id on an answer that is not the
// handshake's, or an invalid one on the handshake's.
func WithHeader(next Action, key, value string) Action {
	return actionFunc(func(x *exchange) {
		inner := *x
		inner.w = &recorder{w: &headerSetter{ResponseWriter: x.w, key: key, value: value}, log: x.w.log, entry: x.w.entry}
		next.serve(&inner)
	})
}

// headerSetter sets one header when the status is written.
type headerSetter struct {
	http.ResponseWriter
	key, value string
	wrote      bool
}

func (h *headerSetter) WriteHeader(status int) {
	if !h.wrote {
		h.wrote = true
		h.Header()[http.CanonicalHeaderKey(h.key)] = []string{h.value}
	}
	h.ResponseWriter.WriteHeader(status)
}

func (h *headerSetter) Write(b []byte) (int, error) {
	if !h.wrote {
		h.WriteHeader(http.StatusOK)
	}
	return h.ResponseWriter.Write(b)
}

func (h *headerSetter) Flush() {
	if !h.wrote {
		h.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(h.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (h *headerSetter) Unwrap() http.ResponseWriter { return h.ResponseWriter }

package mcptest

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Header names of the streamable HTTP transport (MCP spec, basic/transports).
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
)

// GatewayOptions configures a [Gateway]. The zero value is ready to use.
type GatewayOptions struct {
	// KnownSession reports whether the server behind the gateway knows a
	// session id; rules with [UnknownSession] need it. nil: [UnknownSession]
	// never matches. A [Server] fixture sets it.
	KnownSession func(sessionID string) bool
	// MaxHold bounds every delay, hold and silence an [Action] asks for.
	// Zero means 30 s.
	MaxHold time.Duration
	// MaxBodyBytes bounds how much of a request body is read to find its
	// JSON-RPC method and id; a longer body is passed on intact but logged
	// without method or id. Zero means 4 MiB.
	MaxBodyBytes int64
	// Logger receives a debug record per request; nil discards them.
	Logger *slog.Logger
}

// Gateway is an http.Handler in front of an MCP server's handler. It logs
// every request in its [Log] and applies its rules in order: the first rule
// whose [Match] selects a request acts on it; a request no rule selects
// goes to the server.
//
// Its methods are safe for concurrent use, also while requests are served.
type Gateway struct {
	next    http.Handler
	opts    GatewayOptions
	log     *Log
	logger  *slog.Logger
	closing chan struct{} // closed by Close
	// serving counts the handlers running: httptest.Server.Close stops
	// waiting for one once it hijacked its connection (dropConnection),
	// which is not its end.
	serving sync.WaitGroup

	mu     sync.Mutex
	lastID RuleID
	rules  []*installedRule
	prevID string // JSON-RPC id of the last request with one
}

// NewGateway returns a gateway in front of next.
func NewGateway(next http.Handler, opts GatewayOptions) *Gateway {
	if opts.MaxHold <= 0 {
		opts.MaxHold = 30 * time.Second
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Gateway{next: next, opts: opts, log: newLog(), logger: logger, closing: make(chan struct{})}
}

// Log returns the gateway's request log.
func (g *Gateway) Log() *Log { return g.log }

// Add appends a rule (it is consulted after the rules already present) and
// returns its id.
func (g *Gateway) Add(r Rule) RuleID {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lastID++
	g.rules = append(g.rules, &installedRule{id: g.lastID, rule: r})
	return g.lastID
}

// Replace puts r in the place of the rule id, keeping its position and id;
// its occurrence count starts again from zero. It reports whether id was
// present.
func (g *Gateway) Replace(id RuleID, r Rule) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, ir := range g.rules {
		if ir.id == id {
			g.rules[i] = &installedRule{id: id, rule: r}
			return true
		}
	}
	return false
}

// Remove deletes the rule id and reports whether it was present. Requests
// it is already acting on are not affected.
func (g *Gateway) Remove(id RuleID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.rules)
	g.rules = slices.DeleteFunc(g.rules, func(ir *installedRule) bool { return ir.id == id })
	return len(g.rules) != n
}

// Clear removes every rule: requests go to the server again.
func (g *Gateway) Clear() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rules = nil
}

// Fired returns how many requests the rule id has acted on (0 for an
// unknown id).
func (g *Gateway) Fired(id RuleID) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ir := range g.rules {
		if ir.id == id {
			return ir.fired
		}
	}
	return 0
}

// Close releases every delay and hold in progress at once (they then
// proceed as if their time had run out) and makes later ones end at once.
// Requests keep being served. Close is idempotent.
func (g *Gateway) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	closeOnce(g.closing)
}

// waitServing waits until every handler returned, those that hijacked
// their connection included. Call it once no request can arrive (the
// server closed), so no handler starts while it waits.
func (g *Gateway) waitServing() { g.serving.Wait() }

// message is what the gateway reads of a JSON-RPC body.
type message struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
}

// response reports whether msg is a JSON-RPC response: an id, no method.
func (msg message) response() bool {
	return msg.Method == "" && len(msg.ID) > 0 && string(msg.ID) != "null"
}

// ServeHTTP logs the request, then applies the first rule that selects it,
// or passes it to the server.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.serving.Add(1)
	defer g.serving.Done() // after the entry is marked done
	msg := g.readMessage(r)
	sessionID := r.Header.Get(headerSessionID)
	prevID := g.notePrevID(msg.ID)
	// The rule is chosen before the request is logged: a test that saw the
	// request in the log finds it counted in Fired too.
	rule := g.selectRule(r.Method, msg.Method, msg.response(), sessionID, r.Header)
	e := Entry{
		Verb:            r.Method,
		Method:          msg.Method,
		ID:              string(msg.ID),
		SessionID:       sessionID,
		ProtocolVersion: r.Header.Get(headerProtocolVersion),
		LastEventID:     r.Header.Get("Last-Event-ID"),
	}
	action := Pass()
	if rule != nil {
		e.Rule = rule.id
		if rule.rule.Action != nil {
			action = rule.rule.Action
		}
	}
	entry := g.log.add(e)
	g.logger.Debug("mcptest gateway request", "seq", entry.Seq, "verb", r.Method, "method", msg.Method, "rule", entry.Rule)
	x := &exchange{g: g, r: r, msg: msg, prevID: prevID, entry: entry, w: &recorder{w: w, log: g.log, entry: entry}}
	defer g.log.update(entry, func(e *Entry) { e.Done = true })
	action.serve(x)
}

// notePrevID returns the id of the last request with one before this one,
// and remembers id (raw JSON; "" or null for none).
func (g *Gateway) notePrevID(id json.RawMessage) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	prev := g.prevID
	if s := string(id); s != "" && s != "null" {
		g.prevID = s
	}
	return prev
}

// readMessage reads the JSON-RPC method and id of a POST body (bounded by
// MaxBodyBytes) and restores the body for the server.
func (g *Gateway) readMessage(r *http.Request) message {
	var msg message
	if r.Body == nil || r.Method != http.MethodPost {
		return msg
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, g.opts.MaxBodyBytes+1))
	rest := r.Body
	r.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(buf), rest), Closer: rest}
	if err != nil || int64(len(buf)) > g.opts.MaxBodyBytes {
		return msg
	}
	trimmed := bytes.TrimSpace(buf)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []message
		if json.Unmarshal(trimmed, &batch) == nil && len(batch) > 0 {
			return batch[0]
		}
		return msg
	}
	if json.Unmarshal(trimmed, &msg) != nil {
		return message{}
	}
	return msg
}

type readCloser struct {
	io.Reader
	io.Closer
}

// selectRule counts the request against every rule's conditions and
// returns the first rule whose occurrence selects it.
func (g *Gateway) selectRule(verb, method string, response bool, sessionID string, header http.Header) *installedRule {
	unknown := sessionID != "" && g.opts.KnownSession != nil && !g.opts.KnownSession(sessionID)
	g.mu.Lock()
	defer g.mu.Unlock()
	var chosen *installedRule
	for _, ir := range g.rules {
		m := ir.rule.Match
		if m.Verb != "" && m.Verb != verb {
			continue
		}
		if m.Method != "" && m.Method != method || m.Response && !response {
			continue
		}
		if !m.Header.matches(header) {
			continue
		}
		switch m.Session {
		case WithSession:
			if sessionID == "" {
				continue
			}
		case WithoutSession:
			if sessionID != "" {
				continue
			}
		case UnknownSession:
			if !unknown {
				continue
			}
		}
		ir.seen++
		if chosen == nil && m.Occurrence.selects(ir.seen) {
			chosen = ir
			ir.fired++
		}
	}
	return chosen
}

// bound clamps a requested duration to (0, MaxHold].
func (g *Gateway) bound(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Millisecond
	}
	return min(d, g.opts.MaxHold)
}

// wait blocks for d (bounded), until the request ends or the gateway
// closes. It reports false when the request's context ended.
func (g *Gateway) wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(g.bound(d))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-g.closing:
		return true
	case <-r.Context().Done():
		return false
	}
}

// exchange is one request on its way through the gateway.
type exchange struct {
	g      *Gateway
	r      *http.Request
	w      *recorder
	msg    message
	prevID string // see [PlaceholderPrevID]
	entry  *Entry
}

// answeredBy records who answers the request.
func (x *exchange) answeredBy(a Answerer) {
	x.g.log.update(x.entry, func(e *Entry) { e.By = a })
}

// recorder is the ResponseWriter handed to actions and the server: it
// records the status in the log and tells a watcher about every write.
type recorder struct {
	w     http.ResponseWriter
	log   *Log
	entry *Entry

	mu      sync.Mutex
	wrote   bool
	onWrite func()
}

func (rw *recorder) Header() http.Header { return rw.w.Header() }

func (rw *recorder) WriteHeader(status int) {
	rw.noteStatus(status)
	rw.w.WriteHeader(status)
}

func (rw *recorder) Write(b []byte) (int, error) {
	rw.noteStatus(http.StatusOK)
	n, err := rw.w.Write(b)
	rw.touched()
	return n, err
}

// Flush sends buffered data; the server's SSE streams rely on it.
func (rw *recorder) Flush() {
	rw.noteStatus(http.StatusOK)
	_ = http.NewResponseController(rw.w).Flush()
	rw.touched()
}

// Unwrap lets http.ResponseController reach the connection (hijack,
// deadlines).
func (rw *recorder) Unwrap() http.ResponseWriter { return rw.w }

func (rw *recorder) noteStatus(status int) {
	rw.mu.Lock()
	first := !rw.wrote
	rw.wrote = true
	rw.mu.Unlock()
	if first {
		rw.log.update(rw.entry, func(e *Entry) { e.Status = status })
	}
}

func (rw *recorder) touched() {
	rw.mu.Lock()
	f := rw.onWrite
	rw.mu.Unlock()
	if f != nil {
		f()
	}
}

func (rw *recorder) watchWrites(f func()) {
	rw.mu.Lock()
	rw.onWrite = f
	rw.mu.Unlock()
}

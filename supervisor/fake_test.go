//lint:file-ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on, and still served by 2025-era servers

package supervisor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	seam "github.com/mcpsup/mcpsup/session"
)

// beacon wakes test goroutines waiting for something to change.
type beacon struct {
	mu sync.Mutex
	ch chan struct{}
}

func newBeacon() *beacon { return &beacon{ch: make(chan struct{})} }

// changed returns a channel closed by the next ring.
func (b *beacon) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

func (b *beacon) ring() {
	if b == nil {
		return
	}
	b.mu.Lock()
	close(b.ch)
	b.ch = make(chan struct{})
	b.mu.Unlock()
}

// fakeConn is an opener whose Open waits for the test to answer.
type fakeConn struct {
	reqs chan *openReq
	// stubborn makes Dial and Attach ignore their context: the handshake
	// completes even when the supervisor gives up on it.
	stubborn bool
	// bell rings when a session it handed out is used.
	bell *beacon
}

type openReq struct {
	attach bool
	spec   dialSpec
	reply  chan openReply
	ctx    context.Context // the dial's or attach's own
}

type openReply struct {
	sess seam.Endable
	err  error
}

func newFakeConn() *fakeConn { return &fakeConn{reqs: make(chan *openReq, 16), bell: newBeacon()} }

func (c *fakeConn) Open(ctx context.Context, spec dialSpec) (seam.Endable, error) {
	r := &openReq{attach: spec.resume != nil, spec: spec, reply: make(chan openReply, 1), ctx: ctx}
	c.reqs <- r
	if c.stubborn {
		rep := <-r.reply
		if fs, ok := rep.sess.(*fakeSession); ok {
			fs.setBell(c.bell)
		}
		return rep.sess, rep.err
	}
	select {
	case rep := <-r.reply:
		if fs, ok := rep.sess.(*fakeSession); ok {
			fs.setBell(c.bell)
		}
		return rep.sess, rep.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fakeSession is a scripted session.
type fakeSession struct {
	id    string
	init  *mcp.InitializeResult
	tools []*mcp.Tool

	mu        sync.Mutex
	listErr   error         // tools/list answer
	sideErr   error         // resources, prompts, templates answer
	callErr   error         // next tools/call answer (consumed)
	callHang  bool          // tools/call blocks until its context ends
	listGate  chan struct{} // if set, tools/list answers what it read only once this is closed
	calls     []string
	callCtxs  []context.Context // each tools/call's context, as the session got it
	callsDone int               // tools/call answers returned to the supervisor
	subs      []string
	levels    []string
	closed    int
	detached  int
	end       seam.End
	listCalls int
	bell      *beacon
	pingFn    func(context.Context) error // the ping's answer; nil: answered at once

	// The side lists (nil: empty), what each list method was asked, and a
	// hook run after every tools/list reading (a server that notifies).
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	sideCalls map[string]int
	afterList func()
}

func (f *fakeSession) setBell(b *beacon) {
	f.mu.Lock()
	f.bell = b
	f.mu.Unlock()
}

func newFakeSession(id string, tools ...string) *fakeSession {
	fs := &fakeSession{id: id,
		init: &mcp.InitializeResult{ProtocolVersion: "2025-11-25", Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}}}
	for _, n := range tools {
		fs.tools = append(fs.tools, &mcp.Tool{Name: n, InputSchema: map[string]any{"type": "object"}})
	}
	return fs
}

// die ends the session by itself with err, as a transport does.
func (f *fakeSession) die(err error) { f.end.Fail(err) }

func (f *fakeSession) ListTools(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
	f.mu.Lock()
	f.listCalls++
	tools, err, gate, bell, after := append([]*mcp.Tool(nil), f.tools...), f.listErr, f.listGate, f.bell, f.afterList
	f.mu.Unlock()
	if after != nil {
		after()
	}
	bell.ring()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
	}
	if err != nil {
		return nil, "", err
	}
	return tools, "", nil
}
func (f *fakeSession) ListResources(context.Context, string) ([]*mcp.Resource, string, error) {
	f.mu.Lock()
	items := append([]*mcp.Resource(nil), f.resources...)
	f.mu.Unlock()
	return sideAnswer(f, "resources", items)
}
func (f *fakeSession) ListPrompts(context.Context, string) ([]*mcp.Prompt, string, error) {
	f.mu.Lock()
	items := append([]*mcp.Prompt(nil), f.prompts...)
	f.mu.Unlock()
	return sideAnswer(f, "prompts", items)
}
func (f *fakeSession) ListResourceTemplates(context.Context, string) ([]*mcp.ResourceTemplate, string, error) {
	f.mu.Lock()
	items := append([]*mcp.ResourceTemplate(nil), f.templates...)
	f.mu.Unlock()
	return sideAnswer(f, "templates", items)
}

// sideAnswer counts a side list's call and answers items or sideErr.
func sideAnswer[T any](f *fakeSession, list string, items []T) ([]T, string, error) {
	f.mu.Lock()
	if f.sideCalls == nil {
		f.sideCalls = map[string]int{}
	}
	f.sideCalls[list]++
	err, bell := f.sideErr, f.bell
	f.mu.Unlock()
	bell.ring()
	if err != nil {
		return nil, "", err
	}
	return items, "", nil
}

func (f *fakeSession) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer func() { f.callsDone++ }() // under f.mu, before its Unlock
	f.calls = append(f.calls, p.Name)
	f.callCtxs = append(f.callCtxs, ctx)
	f.bell.ring()
	if f.callHang {
		f.mu.Unlock()
		f.bell.ring()
		<-ctx.Done()
		f.mu.Lock()
		return nil, ctx.Err()
	}
	if err := f.callErr; err != nil {
		f.callErr = nil
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
}
func (f *fakeSession) GetPrompt(context.Context, *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{}, nil
}
func (f *fakeSession) ReadResource(context.Context, *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{}, nil
}
func (f *fakeSession) Complete(context.Context, *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{}, nil
}
func (f *fakeSession) Subscribe(_ context.Context, p *mcp.SubscribeParams) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subs = append(f.subs, p.URI)
	f.bell.ring()
	return nil
}
func (f *fakeSession) Unsubscribe(context.Context, *mcp.UnsubscribeParams) error { return nil }
func (f *fakeSession) SetLoggingLevel(_ context.Context, p *mcp.SetLoggingLevelParams) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.levels = append(f.levels, string(p.Level))
	f.bell.ring()
	return nil
}
func (f *fakeSession) Ping(ctx context.Context) error {
	f.mu.Lock()
	ping := f.pingFn
	f.mu.Unlock()
	if ping == nil {
		return nil
	}
	return ping(ctx)
}
func (f *fakeSession) Alive(ctx context.Context) error { return f.Ping(ctx) }
func (f *fakeSession) Info() seam.Info {
	return seam.Info{ID: f.id, ProtocolVersion: "2025-11-25", Initialize: f.init}
}
func (f *fakeSession) Status() (seam.Status, <-chan struct{}) {
	if f.end.Ended() {
		return seam.Ended, nil
	}
	return seam.Live, f.end.Done()
}
func (f *fakeSession) Done() <-chan struct{} { return f.end.Done() }
func (f *fakeSession) Fail(err error) bool   { return f.end.Fail(err) }
func (f *fakeSession) AfterEnd(fn func())    { f.end.AfterEnd(fn) }
func (f *fakeSession) Err() error            { return f.end.Err() }
func (f *fakeSession) Close() error {
	f.mu.Lock()
	f.closed++
	bell := f.bell
	f.mu.Unlock()
	f.end.Fail(seam.ErrClosed)
	bell.ring()
	return nil
}
func (f *fakeSession) Detach() error {
	f.mu.Lock()
	f.detached++
	bell := f.bell
	f.mu.Unlock()
	f.end.Fail(seam.ErrDetached)
	bell.ring()
	return nil
}

func (f *fakeSession) counts() (closed, detached int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed, f.detached
}

// toolCallsDone returns how many tools/call answers the session returned.
func (f *fakeSession) toolCallsDone() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.callsDone
}

func (f *fakeSession) toolCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// rig is a supervisor on a fake connector and a fake clock.
type rig struct {
	t     *testing.T
	sup   *Supervisor
	conn  *fakeConn
	clock *clockwork.FakeClock
	rec   *events.Recorder
	ctx   context.Context
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	rec := &events.Recorder{}
	if cfg.Endpoint == "" {
		cfg.Endpoint = "http://127.0.0.1:1/mcp"
	}
	cfg.Name = "fake"
	cfg.Observe.Clock = clock
	conn := newFakeConn()
	cfg.Observe.Events = events.Multi(rec, events.SinkFunc(func(events.Event) { conn.bell.ring() }))
	cfg.Recovery.Backoff.NoJitter = true
	sup := newSupervisor(cfg.withDefaults(), conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	t.Cleanup(func() { _ = sup.Close() })
	return &rig{t: t, sup: sup, conn: conn, clock: clock, rec: rec, ctx: ctx}
}

// next returns the next Dial or Attach the supervisor makes.
func (r *rig) next() *openReq {
	r.t.Helper()
	select {
	case req := <-r.conn.reqs:
		return req
	case <-r.ctx.Done():
		r.t.Fatalf("no Dial or Attach came (state %s)", r.sup.State())
		return nil
	}
}

func (req *openReq) ok(s seam.Endable) { req.reply <- openReply{sess: s} }
func (req *openReq) fail(err error) {
	req.reply <- openReply{err: err}
}

// wait blocks until the supervisor is in state want.
func (r *rig) wait(want State) {
	r.t.Helper()
	require.NoError(r.t, r.sup.WaitForState(r.ctx, want), "state %s", r.sup.State())
}

// ready starts the supervisor and brings it to ready on sess.
func (r *rig) ready(sess *fakeSession) {
	r.t.Helper()
	r.sup.Start()
	req := r.next()
	require.False(r.t, req.attach)
	req.ok(sess)
	r.wait(Ready)
}

// addSink makes the supervisor's events reach sink too, after the rig's
// recorder. Call it before Start.
func (r *rig) addSink(sink events.Sink) {
	r.sup.cfg.Observe.Events = events.Multi(r.sup.cfg.Observe.Events, sink)
	r.sup.sink = newSinkQueue(r.sup.cfg.Observe.Events, r.sup.cfg.Observe.Logger, r.sup.cfg.Name)
}

// settled is an input that, once taken, hands the loop's events to the
// sink and says so.
func settled(done chan struct{}) input {
	return func(s *Supervisor) {
		s.flushEvents()
		close(done)
	}
}

// events returns the recorded events once everything the supervisor did
// before the call has reached the sink: the loop took every input posted
// before, and the sink received their events.
func (r *rig) events() []events.Event {
	FlushEvents(r.sup)
	return r.rec.Events()
}

// transitions returns the transitions recorded so far, in order.
func (r *rig) transitions() []string {
	var out []string
	for _, e := range r.events() {
		if e.Kind == events.KindTransition {
			out = append(out, string(e.From)+" -"+string(e.Trigger)+"-> "+string(e.To))
		}
	}
	return out
}

// eventsOf returns the recorded events of kind k.
func (r *rig) eventsOf(k events.Kind) []events.Event {
	var out []events.Event
	for _, e := range r.events() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func mcpSessionMissing() error { return mcp.ErrSessionMissing }

// until blocks until cond holds, re-checking it whenever the supervisor's
// state, its events or a fake session change. No polling, no sleeps.
func (r *rig) until(what string, cond func() bool) {
	r.t.Helper()
	for {
		r.sup.mu.Lock()
		snap := r.sup.changedLocked()
		r.sup.mu.Unlock()
		bell := r.conn.bell.changed()
		if cond() {
			return
		}
		select {
		case <-snap:
		case <-bell:
		case <-r.ctx.Done():
			r.t.Fatalf("waiting for %s: %v (state %s)", what, r.ctx.Err(), r.sup.State())
		}
	}
}

// waitEvents waits until n events of kind k were recorded and returns them.
func (r *rig) waitEvents(k events.Kind, n int) []events.Event {
	r.t.Helper()
	var got []events.Event
	r.until(string(k)+" events", func() bool { got = r.eventsOf(k); return len(got) >= n })
	return got
}

// waitReason waits for a terminal failed state with the given reason.
func (r *rig) waitReason(reason Reason) {
	r.t.Helper()
	r.until("reason "+string(reason), func() bool { got, _ := r.sup.Failure(); return got == reason })
}

// failNextCall makes the next tools/call answer err.
func (f *fakeSession) failNextCall(err error) {
	f.mu.Lock()
	f.callErr = err
	f.mu.Unlock()
}

// addTool adds a tool to what tools/list answers, without a notification.
func (f *fakeSession) addTool(name string) {
	f.mu.Lock()
	f.tools = append(f.tools, &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}})
	f.mu.Unlock()
}

func (f *fakeSession) lists() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listCalls
}

// callAsync calls tool on a goroutine and returns where its error arrives.
func (r *rig) callAsync(ctx context.Context, tool string) <-chan error {
	errc := make(chan error, 1)
	go func() {
		_, err := r.sup.CallTool(ctx, &mcp.CallToolParams{Name: tool})
		errc <- err
	}()
	return errc
}

package mcptest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names of the fixed tools of a [Server].
const (
	// RecordTool counts every invocation by its "id" argument and answers
	// "recorded <id> #<n>"; see [Server.Invocations].
	RecordTool = "record"
	// BlockTool blocks until its "id" is released ([Server.Release]), its
	// context ends, its session expires ([Server.ExpireSession],
	// [Server.ExpireAll], [Server.Restart]), the fixture closes, or
	// [Options.MaxBlock] passes; it counts invocations like [RecordTool].
	BlockTool = "block"
	// IdempotentRecordTool counts invocations like [RecordTool] and is
	// annotated idempotentHint; present with [Options.IdempotentRecord].
	IdempotentRecordTool = "record-idempotent"
)

// IDArgs is the input of [RecordTool] and [BlockTool].
type IDArgs struct {
	ID string `json:"id" jsonschema:"the invocation id to count"`
}

// EchoArgs is the input of the plain tools.
type EchoArgs struct {
	Text string `json:"text,omitempty" jsonschema:"text to echo"`
}

// catalog is the fixture's current set of features, kept across restarts.
type catalog struct {
	mu        sync.Mutex
	tools     []string // plain echo tools, sorted
	fixed     bool     // RecordTool and BlockTool present
	idem      bool     // IdempotentRecordTool present
	resources int
	prompts   int
	templates int
}

func newCatalog(o Options) *catalog {
	c := &catalog{fixed: !o.WithoutTools, idem: o.IdempotentRecord, resources: o.Resources, prompts: o.Prompts, templates: o.Templates}
	for i := 1; i <= o.Tools; i++ {
		c.tools = append(c.tools, ToolName(i))
	}
	slices.Sort(c.tools)
	return c
}

// ToolName returns the name of the ith plain tool ("tool-1", "tool-2" ...).
func ToolName(i int) string { return "tool-" + strconv.Itoa(i) }

// ResourceURI returns the URI of the ith resource ("mcptest://resource/1"
// ...); its name is "resource-<i>", its content text "resource <i>".
func ResourceURI(i int) string { return "mcptest://resource/" + strconv.Itoa(i) }

// PromptName returns the name of the ith prompt ("prompt-1" ...).
func PromptName(i int) string { return "prompt-" + strconv.Itoa(i) }

// TemplateURI returns the URI template of the ith resource template
// ("mcptest://template/1/{id}" ...); its name is "template-<i>".
func TemplateURI(i int) string { return "mcptest://template/" + strconv.Itoa(i) + "/{id}" }

func (c *catalog) toolNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.tools)
	if c.fixed {
		out = append(out, BlockTool, RecordTool)
	}
	if c.idem {
		out = append(out, IdempotentRecordTool)
	}
	slices.Sort(out)
	return out
}

// counter counts tool invocations by id, and keeps the _meta of the latest
// one.
type counter struct {
	mu    sync.Mutex
	calls map[string]int
	metas map[string]map[string]any
}

func (c *counter) setMeta(tool, id string, meta map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.metas == nil {
		c.metas = map[string]map[string]any{}
	}
	c.metas[tool+"\x00"+id] = maps.Clone(meta)
}

func (c *counter) meta(tool, id string) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.metas[tool+"\x00"+id])
}

func (c *counter) add(tool, id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[tool+"\x00"+id]++
	return c.calls[tool+"\x00"+id]
}

func (c *counter) get(tool, id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[tool+"\x00"+id]
}

// blocker holds BlockTool calls until their id is released.
type blocker struct {
	mu       sync.Mutex
	gates    map[string]chan struct{} // closed when released
	progress map[string]chan struct{} // one value per progress notification asked
	arrived  map[string]chan struct{} // closed when a call with the id started
	sessions map[*mcp.ServerSession]*sessionBlocks
	closing  chan struct{}
}

// sessionBlocks are the blocked calls of one session: expiring the session
// ends them, since go-sdk's ServerSession.Close waits for its handlers.
type sessionBlocks struct {
	calls int           // calls blocked
	gone  chan struct{} // closed when the session expires
}

func newBlocker() *blocker {
	return &blocker{gates: map[string]chan struct{}{}, arrived: map[string]chan struct{}{}, progress: map[string]chan struct{}{},
		sessions: map[*mcp.ServerSession]*sessionBlocks{}, closing: make(chan struct{})}
}

func chanFor(m map[string]chan struct{}, id string) chan struct{} {
	ch, ok := m[id]
	if !ok {
		ch = make(chan struct{})
		m[id] = ch
	}
	return ch
}

// closeOnce closes ch unless it is closed already. Callers serialise it
// under a lock of their own.
func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// block waits for id's release, ctx, the fixture's close, the expiry of
// session ss or max; meanwhile it calls progress for each progress
// notification asked (Server.Progress).
func (b *blocker) block(ctx context.Context, ss *mcp.ServerSession, id string, max time.Duration, progress func()) error {
	b.mu.Lock()
	gate := chanFor(b.gates, id)
	asked, ok := b.progress[id]
	if !ok {
		asked = make(chan struct{}, 16)
		b.progress[id] = asked
	}
	closeOnce(chanFor(b.arrived, id))
	sb := b.sessions[ss]
	if sb == nil {
		sb = &sessionBlocks{gone: make(chan struct{})}
		b.sessions[ss] = sb
	}
	sb.calls++
	b.mu.Unlock()
	defer b.leave(ss, sb)
	t := time.NewTimer(max)
	defer t.Stop()
	for {
		select {
		case <-asked:
			progress()
			continue
		case <-gate:
			return nil
		case <-b.closing:
			return fmt.Errorf("mcptest: block %q: fixture closed", id)
		case <-sb.gone:
			return fmt.Errorf("mcptest: block %q: session expired", id)
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return fmt.Errorf("mcptest: block %q: not released within %s", id, max)
		}
	}
}

// askProgress asks the blocked calls of id for one progress notification.
func (b *blocker) askProgress(id string) {
	b.mu.Lock()
	ch, ok := b.progress[id]
	if !ok {
		ch = make(chan struct{}, 16)
		b.progress[id] = ch
	}
	b.mu.Unlock()
	select {
	case ch <- struct{}{}:
	default: // enough asked already
	}
}

// leave forgets a call of ss that ended; the last one forgets ss.
func (b *blocker) leave(ss *mcp.ServerSession, sb *sessionBlocks) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if sb.calls--; sb.calls == 0 && b.sessions[ss] == sb {
		delete(b.sessions, ss)
	}
}

// expire ends the blocked calls of ss.
func (b *blocker) expire(ss *mcp.ServerSession) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if sb := b.sessions[ss]; sb != nil {
		close(sb.gone)
		delete(b.sessions, ss)
	}
}

func (b *blocker) release(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	closeOnce(chanFor(b.gates, id))
}

func (b *blocker) waitArrived(ctx context.Context, id string) error {
	b.mu.Lock()
	ch := chanFor(b.arrived, id)
	b.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// listMethodKinds maps each list method to the catalog kind it lists.
var listMethodKinds = map[string]string{
	"tools/list":               "tools",
	"resources/list":           "resources",
	"prompts/list":             "prompts",
	"resources/templates/list": "templates",
}

// absentKinds answers the list method of an empty kind with -32601 Method
// not found, as a server that does not implement it does; go-sdk itself
// would answer an empty list.
func (s *Server) absentKinds(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if kind, ok := listMethodKinds[method]; ok && s.cat.empty(kind) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}
		}
		return next(ctx, method, req)
	}
}

// undeclareTools drops the tools capability from the handshake's result
// (Options.UndeclaredTools); the tools are still listed and served.
func undeclareTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		var caps **mcp.ServerCapabilities
		switch r := res.(type) {
		case *mcp.InitializeResult:
			caps = &r.Capabilities
		case *mcp.DiscoverResult:
			caps = &r.Capabilities
		}
		if caps != nil && *caps != nil {
			c := **caps // go-sdk may share its capabilities between sessions
			c.Tools = nil
			*caps = &c
		}
		return res, nil
	}
}

func (c *catalog) empty(kind string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch kind {
	case "tools":
		return len(c.tools) == 0 && !c.fixed && !c.idem
	case "resources":
		return c.resources == 0
	case "prompts":
		return c.prompts == 0
	default:
		return c.templates == 0
	}
}

// newMCPServer builds a go-sdk server holding the current catalog.
func (s *Server) newMCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: s.opts.Name, Version: "1.0.0"}, &mcp.ServerOptions{
		Logger:                    s.logger,
		SupportedProtocolVersions: s.opts.Mode.protocolVersions(),
	})
	srv.AddReceivingMiddleware(s.absentKinds)
	if s.opts.UndeclaredTools {
		srv.AddReceivingMiddleware(undeclareTools)
	}
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	if s.cat.fixed {
		mcp.AddTool(srv, &mcp.Tool{Name: RecordTool, Description: "Counts this invocation by id."}, s.recordTool)
		mcp.AddTool(srv, &mcp.Tool{Name: BlockTool, Description: "Blocks until its id is released."}, s.blockTool)
	}
	if s.cat.idem {
		mcp.AddTool(srv, &mcp.Tool{Name: IdempotentRecordTool, Description: "Counts this invocation by id; idempotent.",
			Annotations: &mcp.ToolAnnotations{IdempotentHint: true}}, s.idempotentRecordTool)
	}
	for _, name := range s.cat.tools {
		addEchoTool(srv, name)
	}
	for i := 1; i <= s.cat.resources; i++ {
		text := "resource " + strconv.Itoa(i)
		srv.AddResource(&mcp.Resource{URI: ResourceURI(i), Name: "resource-" + strconv.Itoa(i), MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
			})
	}
	for i := 1; i <= s.cat.prompts; i++ {
		text := "prompt " + strconv.Itoa(i)
		srv.AddPrompt(&mcp.Prompt{Name: PromptName(i), Description: text},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
			})
	}
	for i := 1; i <= s.cat.templates; i++ {
		srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: TemplateURI(i), Name: "template-" + strconv.Itoa(i), MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: req.Params.URI}}}, nil
			})
	}
	return srv
}

func addEchoTool(srv *mcp.Server, name string) {
	mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "Echoes its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoArgs) (*mcp.CallToolResult, any, error) {
			return textResult(name + ": " + in.Text), nil, nil
		})
}

func (s *Server) recordTool(_ context.Context, req *mcp.CallToolRequest, in IDArgs) (*mcp.CallToolResult, any, error) {
	n := s.calls.add(RecordTool, in.ID)
	if req != nil && req.Params != nil {
		s.calls.setMeta(RecordTool, in.ID, req.Params.Meta)
	}
	return textResult(fmt.Sprintf("recorded %s #%d", in.ID, n)), nil, nil
}

func (s *Server) idempotentRecordTool(_ context.Context, _ *mcp.CallToolRequest, in IDArgs) (*mcp.CallToolResult, any, error) {
	n := s.calls.add(IdempotentRecordTool, in.ID)
	return textResult(fmt.Sprintf("recorded %s #%d", in.ID, n)), nil, nil
}

func (s *Server) blockTool(ctx context.Context, req *mcp.CallToolRequest, in IDArgs) (*mcp.CallToolResult, any, error) {
	n := s.calls.add(BlockTool, in.ID)
	sent := 0
	progress := func() {
		tok := req.Params.GetProgressToken()
		if tok == nil {
			return
		}
		sent++
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(sent), Message: "still blocked"})
	}
	if err := s.blocks.block(ctx, req.Session, in.ID, s.opts.MaxBlock, progress); err != nil {
		return nil, nil, err
	}
	return textResult(fmt.Sprintf("released %s #%d", in.ID, n)), nil, nil
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

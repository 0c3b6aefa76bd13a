package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// story is one failure story: it builds its servers, supervises them and
// checks how they ended.
type story struct {
	name string
	run  func(ctx context.Context, env *env) result
}

// env is what every story shares: the event sink (live timeline, JSON lines)
// and the writer for narration lines (nil: no narration).
type env struct {
	sink events.Sink
	out  io.Writer
}

// say prints a narration line in the timeline's column layout.
func (e *env) say(server, format string, args ...any) {
	if e.out != nil {
		fmt.Fprintf(e.out, "%-20s   >> %s\n", server, fmt.Sprintf(format, args...))
	}
}

// runStories runs every story at once and returns their results in order.
func runStories(ctx context.Context, ss []story, e *env) []result {
	out := make([]result, len(ss))
	var wg sync.WaitGroup
	for i, s := range ss {
		wg.Go(func() {
			r := s.run(ctx, e)
			r.story = s.name
			out[i] = r
		})
	}
	wg.Wait()
	return out
}

// supervise builds a supervisor for srv whose events go to the shared sink
// and to tr.
func (e *env) supervise(srv *mcptest.Server, name string, tr *trail, cfg supervisor.Config) (*supervisor.Supervisor, error) {
	cfg.Endpoint = srv.URL()
	cfg.HTTP.HTTPClient = srv.HTTPClient()
	cfg.Name = name
	sinks := []events.Sink{e.sink}
	if tr != nil {
		sinks = append(sinks, tr)
	}
	cfg.Observe.Events = events.Multi(sinks...)
	return supervisor.New(cfg)
}

// runStory is the frame every story shares. It starts a server with opts,
// lets prepare (when not nil) set it up and return the supervisor's config,
// supervises the server as name until ready, and hands server, supervisor
// and trail to check. A failed setup, or a supervisor that never reaches
// ready, ends the story with r.err (the row filled when a supervisor was
// made). The supervisor and the server are closed when it returns.
func (e *env) runStory(ctx context.Context, name string, opts mcptest.Options,
	prepare func(srv *mcptest.Server, r *result) (supervisor.Config, error),
	check func(srv *mcptest.Server, sup *supervisor.Supervisor, tr *trail, r *result),
) (r result) {
	srv, err := mcptest.NewServer(opts)
	if err != nil {
		r.err = err
		return r
	}
	defer srv.Close()
	var cfg supervisor.Config
	if prepare != nil {
		if cfg, err = prepare(srv, &r); err != nil {
			r.err = err
			return r
		}
	}
	tr := newTrail()
	sup, err := e.startReady(ctx, srv, name, tr, cfg)
	if sup != nil {
		defer sup.Close()
	}
	if err != nil {
		r.err = err
		if sup != nil {
			fillRow(&r, sup, srv, tr)
		}
		return r
	}
	check(srv, sup, tr, &r)
	return r
}

// startReady supervises srv and waits for ready. It returns the supervisor
// whenever one was made, so the caller can close it, also with an error.
func (e *env) startReady(ctx context.Context, srv *mcptest.Server, name string, tr *trail, cfg supervisor.Config) (*supervisor.Supervisor, error) {
	sup, err := e.supervise(srv, name, tr, cfg)
	if err != nil {
		return nil, err
	}
	sup.Start()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		return sup, fmt.Errorf("waiting for ready: %w (state %s)", err, sup.State())
	}
	if tr != nil {
		if err := tr.reached(ctx, supervisor.Ready); err != nil {
			return sup, fmt.Errorf("waiting for the ready event: %w", err)
		}
	}
	return sup, nil
}

// persistSession opens a real session with a first supervisor, detaches it
// (no DELETE: the server keeps the session) and returns its resume state
// after a round trip through its JSON form, as a host persists it.
func (e *env) persistSession(ctx context.Context, srv *mcptest.Server, name string) (*supervisor.ResumeState, error) {
	sup, err := e.supervise(srv, name, nil, supervisor.Config{})
	if err != nil {
		return nil, err
	}
	sup.Start()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		_ = sup.Close()
		return nil, fmt.Errorf("%s did not reach ready (state %s): %w", name, sup.State(), err)
	}
	if err := sup.Detach(); err != nil {
		return nil, err
	}
	rs := sup.ResumeState()
	if rs == nil {
		return nil, errors.New(name + ": no resume state after Detach")
	}
	data, err := json.Marshal(rs)
	if err != nil {
		return nil, err
	}
	return supervisor.ParseResumeState(data)
}

// callRecord calls the recording tool with id.
func callRecord(ctx context.Context, sup *supervisor.Supervisor, id string) error {
	_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}})
	return err
}

// lastSeq is the sequence number of the last request the gateway logged.
func lastSeq(l *mcptest.Log) int {
	es := l.Entries()
	if len(es) == 0 {
		return 0
	}
	return es[len(es)-1].Seq
}

// since counts the requests logged after mark that keep selects.
func since(l *mcptest.Log, mark int, keep func(mcptest.Entry) bool) int {
	return l.CountFunc(func(e mcptest.Entry) bool { return e.Seq > mark && keep(e) })
}

func method(m string) func(mcptest.Entry) bool {
	return func(e mcptest.Entry) bool { return e.Method == m }
}

// extraRequests counts the requests logged after mark that are neither a
// tools/call nor a standalone stream GET: the handshakes, listings and
// DELETEs a failed call cost (failure story S4). The standalone stream is
// reported in its own column.
func extraRequests(l *mcptest.Log, mark int) int {
	return since(l, mark, func(e mcptest.Entry) bool {
		return e.Method != "tools/call" && e.Verb != "GET"
	})
}

// sameNames reports whether the catalog lists exactly the server's tools.
func sameNames(got, want []string) bool {
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}

// fillRow sets the table columns that every story shows.
func fillRow(r *result, sup *supervisor.Supervisor, srv *mcptest.Server, tr *trail) {
	r.state = sup.State().String()
	r.tools = fmt.Sprintf("%d of %d", len(sup.Catalog().Tools), len(srv.ToolNames()))
	r.sessions = fmt.Sprintf("%d (gen %d)", sup.SessionsOpened(), sup.Generation())
	if tr.kind(events.KindStreamDisabled) > 0 {
		r.stream = "off: GET-hostile (auto)"
	} else {
		r.stream = "on"
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// joinPairs renders "429:0 500:0" from keys and values in order.
func joinPairs(keys []string, vals []int) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, vals[i])
	}
	return strings.Join(parts, " ")
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// allStories returns the stories in table order.
func allStories() []story {
	return []story{
		{name: "S1 blind resume, templates 400/-32601", run: storyS1},
		{name: "S2 stale session, null-id 400", run: storyS2},
		{name: "S4 tool call 429/500/403, then 404", run: storyS4},
		{name: "S5 GET-hostile gateway", run: storyS5},
		{name: "healthy server", run: storyHealthy},
		{name: "stdio server crashes, restarted", run: storyStdioCrash},
		{name: "stdio server crash-loops, churn", run: storyStdioChurn},
	}
}

// storyS1: a host resumes a persisted session blind (it kept no
// capabilities); the server answers resources/templates/list with HTTP 400
// and JSON-RPC -32601. DESIGN.md S1: ready, the full tool catalog, zero
// initialize on the wire, templates absent.
func storyS1(ctx context.Context, e *env) result {
	const name = "s1-blind-resume"
	var mark int
	prepare := func(srv *mcptest.Server, r *result) (supervisor.Config, error) {
		rs, err := e.persistSession(ctx, srv, "s1-seed")
		if err != nil {
			return supervisor.Config{}, err
		}
		rs.InitializeResult = nil // the host persisted no capabilities: the resume is blind
		srv.Gateway().Add(mcptest.TemplatesMethodNotFound())
		log := srv.Log()
		r.expect(log.CountVerb(http.MethodDelete) == 0, "Detach sends no DELETE", "%d DELETE", log.CountVerb(http.MethodDelete))
		mark = lastSeq(log)
		e.say(name, "resuming the persisted session blind; the gateway answers templates/list 400 -32601")
		return supervisor.Config{Resume: rs}, nil
	}
	return e.runStory(ctx, name, mcptest.Options{Tools: 3, Resources: 2, Prompts: 1}, prepare, func(srv *mcptest.Server, sup *supervisor.Supervisor, tr *trail, r *result) {
		log := srv.Log()
		callErr := callRecord(ctx, sup, "s1-call")
		fillRow(r, sup, srv, tr)

		r.expect(sup.State() == supervisor.Ready, "state ready", "%s", sup.State())
		r.expect(sameNames(sup.Catalog().ToolNames(), srv.ToolNames()), "the full tool catalog", "%v", sup.Catalog().ToolNames())
		inits := since(log, mark, method("initialize"))
		r.expect(inits == 0, "zero initialize on the wire", "%d", inits)
		r.expect(tr.entered(supervisor.Probing) == 1, "one blind probe round", "%d", tr.entered(supervisor.Probing))
		r.expect(tr.entered(supervisor.StaleRecovering) == 0, "no stale recovery", "%d", tr.entered(supervisor.StaleRecovering))
		tmpl := "no probe report"
		if rep, ok := tr.probeReport(); ok {
			for _, l := range rep.Lists {
				if l.List == "resource-templates" {
					tmpl = l.Status + " (" + l.Verdict.Class.String() + ")"
				}
			}
		}
		r.expect(tmpl == events.ListAbsent+" (method-not-found)", "templates probed absent (method-not-found)", "%s", tmpl)
		r.expect(sup.SessionsOpened() == 1 && sup.Generation() == 1, "one session (the resumed one)", "%s", r.sessions)
		r.expect(callErr == nil && srv.Invocations(mcptest.RecordTool, "s1-call") == 1, "a tool call succeeds", "%v, ran %d times", callErr, srv.Invocations(mcptest.RecordTool, "s1-call"))
	})
}

// storyS2: a persisted session the server no longer knows (it restarted) is
// rejected with the TypeScript SDK's 400 {"code":-32000, "id":null}. DESIGN.md
// S2: one stale recovery, exactly one initialize, ready.
func storyS2(ctx context.Context, e *env) result {
	const name = "s2-stale-null-id"
	var (
		rule mcptest.RuleID
		mark int
	)
	prepare := func(srv *mcptest.Server, _ *result) (supervisor.Config, error) {
		rs, err := e.persistSession(ctx, srv, "s2-seed")
		if err != nil {
			return supervisor.Config{}, err
		}
		rs.InitializeResult = nil // resumed blind, as in the story
		if err := srv.Restart(); err != nil {
			return supervisor.Config{}, err
		}
		rule = srv.Gateway().Add(mcptest.StaleSessionNullID())
		mark = lastSeq(srv.Log())
		e.say(name, "the server restarted: the persisted session id is unknown and rejected 400 -32000 id:null")
		return supervisor.Config{Resume: rs}, nil
	}
	return e.runStory(ctx, name, mcptest.Options{Tools: 2, Prompts: 1}, prepare, func(srv *mcptest.Server, sup *supervisor.Supervisor, tr *trail, r *result) {
		log := srv.Log()
		callErr := callRecord(ctx, sup, "s2-call")
		fillRow(r, sup, srv, tr)

		r.expect(srv.Gateway().Fired(rule) >= 1, "the stale session rejected with the null-id 400", "rule fired %d times", srv.Gateway().Fired(rule))
		r.expect(sup.State() == supervisor.Ready, "state ready", "%s", sup.State())
		probing := tr.entered(supervisor.Probing)
		r.expect(probing == 1, "one probe round, none after the recovery", "%d probe rounds", probing)
		stale := tr.entered(supervisor.StaleRecovering)
		r.expect(stale == 1, "exactly one stale recovery", "%d", stale)
		inits := since(log, mark, method("initialize"))
		r.expect(inits == 1, "exactly one initialize", "%d", inits)
		r.expect(sameNames(sup.Catalog().ToolNames(), srv.ToolNames()), "the full tool catalog", "%v", sup.Catalog().ToolNames())
		r.expect(callErr == nil && srv.Invocations(mcptest.RecordTool, "s2-call") == 1, "a tool call succeeds", "%v, ran %d times", callErr, srv.Invocations(mcptest.RecordTool, "s2-call"))
	})
}

// storyS4: tool calls answered 429 (non-JSON, Retry-After), 500 and an HTML
// 403, each once, then a 404 after the server expired the session. DESIGN.md
// S4: zero extra requests and the generation unchanged for the first three,
// one new session for the 404, no failed call replayed.
func storyS4(ctx context.Context, e *env) result {
	const name = "s4-call-errors"
	return e.runStory(ctx, name, mcptest.Options{Tools: 2}, nil, func(srv *mcptest.Server, sup *supervisor.Supervisor, tr *trail, r *result) {
		log := srv.Log()
		gen := sup.Generation()

		faults := []struct {
			label string
			rule  mcptest.Rule
			class classify.Class
		}{
			{"429", mcptest.ToolCallRateLimited(time.Second), classify.RateLimited},
			{"500", mcptest.ToolCallServerError(), classify.ServerError},
			{"403", mcptest.ToolCallForbiddenHTML(), classify.Forbidden},
		}
		var labels []string
		var extras []int
		for _, f := range faults {
			rule := f.rule
			rule.Match.Occurrence = mcptest.First()
			srv.Gateway().Add(rule)
			mark := lastSeq(log)
			calls := since(log, 0, method("tools/call"))
			e.say(name, "the gateway answers the next tools/call %s", f.label)

			id := "s4-" + f.label
			err := callRecord(ctx, sup, id)
			var ce *supervisor.CallError
			ok := errors.As(err, &ce) && ce.Verdict.Class == f.class && ce.Delivery == supervisor.Answered
			r.expect(ok && fmt.Sprint(ce.Verdict.HTTPStatus) == f.label, "the "+f.label+" call fails as "+f.class.String()+", answered, naming the status", "%v", err)

			if f.class == classify.RateLimited {
				r.expect(ok && ce.RetryAfter() == time.Second, "the 429 error carries Retry-After 1s", "%v", retryAfterOf(ce))
				// Inside the Retry-After window a call fails at once, unsent.
				err := callRecord(ctx, sup, "s4-in-window")
				sent := since(log, 0, method("tools/call")) - calls - 1
				r.expect(errors.Is(err, supervisor.ErrRateLimited) && sent == 0, "a call inside the Retry-After window fails at once, unsent", "%v, %d sent", err, sent)
				e.say(name, "honouring Retry-After: %s", ce.RetryAfter())
				if err := sleep(ctx, ce.RetryAfter()); err != nil {
					r.err = err
					break
				}
			}
			after := id + "-then"
			afterErr := callRecord(ctx, sup, after)
			r.expect(afterErr == nil, "the next call after the "+f.label+" succeeds on the same session", "%v", afterErr)
			extra := extraRequests(log, mark)
			labels, extras = append(labels, f.label), append(extras, extra)
			r.expect(extra == 0, "zero extra requests for the "+f.label, "%d", extra)
			r.expect(sup.Generation() == gen, "the generation unchanged after the "+f.label, "gen %d, was %d", sup.Generation(), gen)
			r.expect(srv.Invocations(mcptest.RecordTool, id) == 0, "the failed "+f.label+" call not replayed", "ran %d times", srv.Invocations(mcptest.RecordTool, id))
		}
		if r.err != nil {
			fillRow(r, sup, srv, tr)
			return
		}

		// A 404: the server expired the session.
		mark := lastSeq(log)
		initsBefore := since(log, 0, method("initialize"))
		expired := srv.ExpireAll()
		e.say(name, "the server expired %d session(s): the next tools/call gets 404", expired)
		err := callRecord(ctx, sup, "s4-404")
		var ce *supervisor.CallError
		ok := errors.As(err, &ce) && ce.Verdict.Class == classify.SessionExpired
		r.expect(ok, "the 404 call fails as session-expired", "%v", err)
		afterErr := callRecord(ctx, sup, "s4-404-then")
		r.expect(afterErr == nil, "the next call after the 404 succeeds on a new session", "%v", afterErr)
		extra := extraRequests(log, mark)
		labels, extras = append(labels, "404"), append(extras, extra)
		inits := since(log, 0, method("initialize")) - initsBefore
		r.expect(inits == 1, "one new handshake for the 404", "%d initialize", inits)
		initialized, lists := since(log, mark, method("notifications/initialized")), since(log, mark, method("tools/list"))
		r.expect(extra == 3 && initialized == 1 && lists == 1, "the 404 costs the handshake minimum: initialize, notifications/initialized, tools/list",
			"%d extra requests: %d initialize, %d notifications/initialized, %d tools/list", extra, inits, initialized, lists)
		r.expect(sup.Generation() == gen+1, "one new session for the 404", "gen %d, was %d", sup.Generation(), gen)
		r.expect(srv.Invocations(mcptest.RecordTool, "s4-404") == 0, "the failed 404 call not replayed", "ran %d times", srv.Invocations(mcptest.RecordTool, "s4-404"))
		for _, id := range []string{"s4-429-then", "s4-500-then", "s4-403-then", "s4-404-then"} {
			n := srv.Invocations(mcptest.RecordTool, id)
			r.expect(n == 1, "call "+id+" ran once", "%d", n)
		}
		r.expect(sup.State() == supervisor.Ready, "state ready", "%s", sup.State())

		fillRow(r, sup, srv, tr)
		r.extra = joinPairs(labels, extras)
	})
}

func retryAfterOf(ce *supervisor.CallError) any {
	if ce == nil {
		return "no *CallError"
	}
	return ce.RetryAfter()
}

// s5Tuning returns the GET-hostility rule and stream keeper of the demo,
// tuned so the rule fires within a second. The production defaults (zero
// Config.Stream.HostileRule and Config.Stream.Keeper) are 3 attempts that each end
// within 2s, re-dialed after 1s doubling up to 30s: about 3s to decide.
func s5Tuning() (supervisor.HostileRule, supervisor.StreamKeeper) {
	const span = 500 * time.Millisecond
	return supervisor.HostileRule{Threshold: 3},
		supervisor.StreamKeeper{Span: span, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
}

// storyS5: a gateway closes every standalone GET stream at once while POSTs
// work. DESIGN.md S5: no session lost, the stream turned off by the auto rule
// (a stream-disabled event), then no more GETs.
func storyS5(ctx context.Context, e *env) result {
	const name = "s5-get-hostile"
	rule, keeper := s5Tuning()
	prepare := func(srv *mcptest.Server, _ *result) (supervisor.Config, error) {
		srv.Gateway().Add(mcptest.GETHostile())
		e.say(name, "the gateway answers every GET 200 text/event-stream and closes it at once")
		e.say(name, "demo rule: %d stream attempts failing within %s (production default: 3 within 2s)", rule.Threshold, keeper.Span)
		return supervisor.Config{
			Stream: supervisor.StreamConfig{
				Policy:      supervisor.StreamAuto,
				HostileRule: rule,
				Keeper:      keeper,
			},
		}, nil
	}
	return e.runStory(ctx, name, mcptest.Options{Tools: 2}, prepare, func(srv *mcptest.Server, sup *supervisor.Supervisor, tr *trail, r *result) {
		log := srv.Log()
		waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := tr.wait(waitCtx, events.KindStreamDisabled)
		cancel()
		r.expect(err == nil, "a stream-disabled event", "%v", err)
		gets := log.CountVerb(http.MethodGet)
		callErr := callRecord(ctx, sup, "s5-call")
		// A keeper still re-dialing would send several GETs in this time.
		quiet := 4 * keeper.MaxBackoff
		e.say(name, "watching for %s: no GET may follow the decision", quiet)
		if err := sleep(ctx, quiet); err != nil {
			r.err = err
		}
		later := log.CountVerb(http.MethodGet) - gets
		fillRow(r, sup, srv, tr)

		r.expect(sup.State() == supervisor.Ready, "state ready", "%s", sup.State())
		r.expect(later == 0, "zero GETs after the stream was turned off", "%d GETs (%d before)", later, gets)
		r.expect(sup.Generation() == 1 && sup.SessionsOpened() == 1, "no session lost", "%s", r.sessions)
		inits, deletes := log.Count("initialize"), log.CountVerb(http.MethodDelete)
		r.expect(inits == 1 && deletes == 0, "one handshake, no DELETE", "%d initialize, %d DELETE", inits, deletes)
		rs := sup.ResumeState()
		r.expect(rs != nil && rs.StandaloneStream.Off, "the resume state remembers the stream is off", "%s", streamDecision(rs))
		r.expect(callErr == nil && srv.Invocations(mcptest.RecordTool, "s5-call") == 1, "a tool call succeeds", "%v", callErr)
	})
}

func streamDecision(rs *supervisor.ResumeState) string {
	if rs == nil {
		return "no resume state"
	}
	return fmt.Sprintf("off=%t decided_at=%s", rs.StandaloneStream.Off, rs.StandaloneStream.DecidedAt.UTC().Format(time.RFC3339))
}

// storyHealthy: a plain server. Ready with the full catalog, calls succeed,
// one session with its standalone stream open, Close ends it with DELETE.
func storyHealthy(ctx context.Context, e *env) result {
	const name = "healthy"
	return e.runStory(ctx, name, mcptest.Options{Tools: 3, Resources: 2, Prompts: 2, Templates: 1}, nil, func(srv *mcptest.Server, sup *supervisor.Supervisor, tr *trail, r *result) {
		log := srv.Log()
		var callErrs []error
		for i := range 3 {
			if err := callRecord(ctx, sup, fmt.Sprintf("healthy-%d", i)); err != nil {
				callErrs = append(callErrs, err)
			}
		}
		waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		streamErr := log.WaitVerb(waitCtx, http.MethodGet, 1)
		cancel()
		fillRow(r, sup, srv, tr)

		cat := sup.Catalog()
		r.expect(sup.State() == supervisor.Ready, "state ready", "%s", sup.State())
		r.expect(sameNames(cat.ToolNames(), srv.ToolNames()) && len(cat.Resources) == 2 && len(cat.Prompts) == 2 && len(cat.ResourceTemplates) == 1,
			"the full catalog (tools, 2 resources, 2 prompts, 1 template)", "%d tools, %d resources, %d prompts, %d templates",
			len(cat.Tools), len(cat.Resources), len(cat.Prompts), len(cat.ResourceTemplates))
		r.expect(len(callErrs) == 0, "3 tool calls succeed", "%v", callErrs)
		r.expect(sup.Generation() == 1 && log.Count("initialize") == 1, "one session, one handshake", "gen %d, %d initialize", sup.Generation(), log.Count("initialize"))
		r.expect(streamErr == nil && tr.kind(events.KindStreamDisabled) == 0, "the standalone stream open (a GET), never disabled", "%v", streamErr)
		r.expect(tr.kind(events.KindCallFailed) == 0, "no failed call", "%d", tr.kind(events.KindCallFailed))

		if err := sup.Close(); err != nil {
			r.err = err
		}
		deletes := log.CountVerb(http.MethodDelete)
		r.expect(deletes == 1, "Close ends the session with one DELETE", "%d DELETE", deletes)
		r.state = sup.State().String() + " (was ready)"
	})
}

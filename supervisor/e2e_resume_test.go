package supervisor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// persisted runs a supervisor to ready, detaches it (no DELETE) and returns
// the resume state a host would have saved.
func persisted(t *testing.T, e *e2e, blind bool) *supervisor.ResumeState {
	t.Helper()
	e.start()
	require.NoError(t, e.sup.Detach())
	rs := e.sup.ResumeState()
	require.NotNil(t, rs)
	require.NotEmpty(t, rs.SessionID)
	if blind {
		rs.InitializeResult = nil
	}
	e.srv.Log().Reset()
	return rs
}

// resumeE2E builds a second supervisor on e's server from rs.
func resumeE2E(t *testing.T, e *e2e, rs *supervisor.ResumeState, cfg supervisor.Config) (*supervisor.Supervisor, *events.Recorder) {
	t.Helper()
	rec := &events.Recorder{}
	cfg.Endpoint, cfg.HTTP.HTTPClient, cfg.Observe.Events, cfg.Resume, cfg.Name = e.srv.URL(), e.srv.HTTPClient(), rec, rs, t.Name()+"/resumed"
	return mustNew(t, cfg), rec
}

func countTransitions(rec *events.Recorder, to supervisor.State) int {
	n := 0
	for _, ev := range rec.Events() {
		if ev.Kind == events.KindTransition && ev.To == to && ev.From != to {
			n++
		}
	}
	return n
}

// S1: a blind resume whose templates probe answers 400 + -32601 reaches
// ready with the whole tool catalog and no initialize on the wire.
func TestE2ES1BlindResumeKeepsTheToolCatalog(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 4, Resources: 1, Prompts: 1}, supervisor.Config{})
	rs := persisted(t, e, true)
	e.srv.Gateway().Add(mcptest.TemplatesMethodNotFound())

	sup, rec := resumeE2E(t, e, rs, supervisor.Config{})
	sup.Start()
	require.NoError(t, sup.WaitForState(e.ctx, supervisor.Ready), "state %s", sup.State())
	settle(t, e.ctx, sup, rec, supervisor.Ready)
	require.ElementsMatch(t, e.srv.ToolNames(), sup.Catalog().ToolNames())
	require.Zero(t, e.srv.Log().Count("initialize"), "a resume sends no initialize")
	require.Equal(t, 1, e.srv.Log().Count("resources/templates/list"))
	require.Zero(t, countTransitions(rec, "stale-recovering"))
	require.Equal(t, rs.SessionID, sup.ResumeState().SessionID, "the resumed session is kept")

	_, err := sup.CallTool(e.ctx, callRecord("after-resume"))
	require.NoError(t, err)
}

// S2: a resumed session the server rejects costs exactly one initialize and
// is never probed again; both rejections DESIGN.md names.
func TestE2ES2StaleRecoveryOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule mcptest.Rule
	}{
		{"null-id 400", mcptest.StaleSessionNullID()},
		{"no-id 400", mcptest.StaleSessionNoID()},
		{"500", mcptest.StaleSession500()},
		{"404", mcptest.Rule{}}, // go-sdk's own answer to an unknown session
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, mcptest.Options{Tools: 3}, supervisor.Config{})
			rs := persisted(t, e, true)
			require.NoError(t, e.srv.Restart())
			if tc.rule.Action != nil {
				e.srv.Gateway().Add(tc.rule)
			}

			sup, rec := resumeE2E(t, e, rs, supervisor.Config{})
			sup.Start()
			require.NoError(t, sup.WaitForState(e.ctx, supervisor.Ready), "state %s", sup.State())
			settle(t, e.ctx, sup, rec, supervisor.Ready)
			log := e.srv.Log()
			require.Equal(t, 1, log.Count("initialize"), "exactly one full handshake")
			require.Equal(t, 1, countTransitions(rec, "stale-recovering"))
			fresh := sup.ResumeState().SessionID
			require.NotEqual(t, rs.SessionID, fresh)
			listsOn := func(id string) int {
				return log.CountFunc(func(en mcptest.Entry) bool { return en.Method == "tools/list" && en.SessionID == id })
			}
			// The first rejected probe ends the go-sdk session, so tools/list
			// of the probe round may never leave; the new session lists once.
			require.LessOrEqual(t, listsOn(rs.SessionID), 1, "one probe round")
			require.Equal(t, 1, listsOn(fresh), "one declared listing, no second probe round")
			require.ElementsMatch(t, e.srv.ToolNames(), sup.Catalog().ToolNames())
		})
	}
}

// A known-capabilities resume lists what was declared, without probing.
func TestE2EKnownResumeListsDeclared(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 2}, supervisor.Config{})
	rs := persisted(t, e, false)
	require.NotNil(t, rs.InitializeResult)

	sup, rec := resumeE2E(t, e, rs, supervisor.Config{})
	sup.Start()
	require.NoError(t, sup.WaitForState(e.ctx, supervisor.Ready))
	settle(t, e.ctx, sup, rec, supervisor.Ready)
	require.Zero(t, e.srv.Log().Count("initialize"))
	require.Zero(t, e.srv.Log().Count("prompts/list"), "undeclared lists are not sent")
	require.Zero(t, countTransitions(rec, "probing"))
	require.Equal(t, 1, countTransitions(rec, "listing-declared"))
}

// A malformed persisted state is refused with an error naming the field.
func TestE2EMalformedResumeStateRefused(t *testing.T) {
	_, err := supervisor.ParseResumeState([]byte(`{"version":1,"session_id":"bad id","protocol_version":"2025-11-25"}`))
	var rse *supervisor.ResumeStateError
	require.ErrorAs(t, err, &rse)
	require.Equal(t, "session_id", rse.Field)

	_, err = supervisor.ParseResumeState([]byte(`{"version":1,"session_id":"abc","protocol_version":"yesterday"}`))
	require.ErrorAs(t, err, &rse)
	require.Equal(t, "protocol_version", rse.Field)

	_, err = supervisor.ParseResumeState([]byte(`{"version":2,"session_id":"abc","protocol_version":"2025-11-25"}`))
	require.ErrorAs(t, err, &rse)
	require.Equal(t, "version", rse.Field)

	_, err = supervisor.New(supervisor.Config{Endpoint: "http://127.0.0.1:1/mcp", Resume: &supervisor.ResumeState{Version: 1,
		ResumeState: httpsession.ResumeState{SessionID: "a\x01", ProtocolVersion: "2025-11-25"}}})
	require.ErrorAs(t, err, &rse)
	require.Equal(t, "session_id", rse.Field)
	_ = time.Second
}

// S1's neighbours: a prompts probe answered 500 and a resources probe that
// hangs past its deadline leave the tool catalog whole.
func TestE2EBlindResumeSideProbesFailOnTheirOwn(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 3, Resources: 1, Prompts: 1}, supervisor.Config{})
	rs := persisted(t, e, true)
	gw := e.srv.Gateway()
	gw.Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "prompts/list"}, Action: mcptest.PlainText(500, "boom")})
	gw.Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "resources/list"}, Action: mcptest.Delay(10 * time.Second)})

	sup, rec := resumeE2E(t, e, rs, supervisor.Config{Recovery: supervisor.RecoveryConfig{ProbeTimeout: 200 * time.Millisecond}})
	sup.Start()
	require.NoError(t, sup.WaitForState(e.ctx, supervisor.Ready), "state %s", sup.State())
	settle(t, e.ctx, sup, rec, supervisor.Ready)
	require.ElementsMatch(t, e.srv.ToolNames(), sup.Catalog().ToolNames())
	require.Zero(t, e.srv.Log().Count("initialize"))
	reports := eventsOf(rec, events.KindProbeReport)
	require.Len(t, reports, 1)
	status := map[string]string{}
	for _, l := range reports[0].Lists {
		status[l.List] = l.Status + "/" + l.Verdict.Class.String()
	}
	require.Equal(t, "present/none", status["tools"])
	require.Equal(t, "degraded/server-error", status["prompts"])
	require.Equal(t, "degraded/timeout", status["resources"])
}

// A 401 on tools/list while probing propagates: terminal failed, no stale
// recovery, no handshake.
func TestE2EBlindResumeUnauthorizedProbe(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 2}, supervisor.Config{})
	rs := persisted(t, e, true)
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "tools/list"}, Action: mcptest.PlainText(401, "no")})

	sup, rec := resumeE2E(t, e, rs, supervisor.Config{Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}})
	sup.Start()
	require.NoError(t, sup.WaitForState(e.ctx, supervisor.Failed))
	settle(t, e.ctx, sup, rec, supervisor.Failed)
	reason, v := sup.Failure()
	require.Equal(t, supervisor.ReasonUnauthorized, reason, "events: %v", pathOf(rec))
	require.Equal(t, 401, v.HTTPStatus)
	require.Zero(t, countTransitions(rec, "stale-recovering"))
	require.Zero(t, e.srv.Log().Count("initialize"))
}

// pathOf renders the recorded transitions and their verdicts, for failure
// messages.
func pathOf(rec *events.Recorder) []string {
	var out []string
	for _, e := range rec.Events() {
		out = append(out, string(e.Kind)+":"+string(e.From)+">"+string(e.To)+"/"+string(e.Trigger)+"/"+e.Verdict.String())
	}
	return out
}

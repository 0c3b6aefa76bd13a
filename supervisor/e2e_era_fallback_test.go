package supervisor_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A recognized modern JSON-RPC error identifies a server of the 2026-07-28
// era or later (MCP 2026-07-28 basic/transports/streamable-http.mdx,
// "Backward Compatibility": "If the body contains a recognized modern
// JSON-RPC error, the server speaks a modern version of MCP — retry ...
// rather than falling back"), and the era is cached "re-probing if the
// cached assumption later fails" (basic/versioning.mdx, "Backward
// Compatibility with Initialization-Based Versions"). So a fallback to
// 2025 that the server refuses with one is re-probed at once, whatever
// Config.HTTP.EraReprobe says.

// only2026 makes srv's gateway refuse every request of the 2025 era as a
// server that speaks only 2026-07-28 does: 400 with -32022 ("If the server
// does not implement the requested protocol version ... it MUST respond
// with 400 Bad Request and an UnsupportedProtocolVersionError",
// streamable-http.mdx "Protocol Version Header"). With initialize, the
// handshake too; without, a gateway that still lets it through.
func only2026(srv *mcptest.Server, initialize bool) {
	if initialize {
		srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "initialize"}, Action: refuseVersion()})
	}
	srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Header: mcptest.HeaderMatch{Name: "Mcp-Protocol-Version", Value: "2025-11-25"}}, Action: refuseVersion()})
}

// eraChange is what an era-changed event says.
type eraChange struct {
	From, To, Why, Op string
	Status            int
	Code              int64
}

// eraChanges returns e's era-changed events.
func (e *e2e) eraChanges() []eraChange {
	var out []eraChange
	for _, ev := range e.eventsOf(events.KindEraChanged) {
		out = append(out, eraChange{ev.EraFrom, ev.EraTo, ev.EraWhy, ev.Op, ev.HTTPStatus, ev.RPCCode})
	}
	return out
}

// refused25 is the change of a 2025-11-25 request of op refused with HTTP
// 400, JSON-RPC -32022, on a session opening or live.
func refused25(op string, live bool) eraChange {
	why := "refused-opening"
	if live {
		why = "refused-live"
	}
	return eraChange{From: "2025-11-25", Why: why, Op: op, Status: 400, Code: -32022}
}

// neverTerminal checks that e's supervisor never entered a terminal failed
// state.
func (e *e2e) neverTerminal() {
	e.t.Helper()
	for _, ev := range e.rec.Events() {
		if ev.Kind == events.KindTransition && ev.To == supervisor.Failed {
			require.Empty(e.t, ev.Reason, "a terminal failed: %s %v", ev.Reason, ev.Verdict)
		}
	}
}

// readyOn waits until e's supervisor is ready on a session of version.
func (e *e2e) readyOn(version string) {
	e.t.Helper()
	for e.sup.State() != supervisor.Ready || e.version() != version {
		state := e.sup.State()
		require.True(e.t, e.sup.WaitForStateChange(e.ctx, state), "never ready on %s: %s", version, state)
	}
}

// bounded is a retry budget a retry still serves: the failure it must
// not end in is budget-spent. The stream is off, so the first request of a
// session after its handshake is its listing.
func bounded(cfg supervisor.Config) supervisor.Config {
	cfg = fastStream(cfg)
	cfg.Recovery.Backoff.MaxAttempts = 4
	cfg.Limits.CatalogPollInterval = -1
	cfg.Stream.Policy = supervisor.StreamOff
	return cfg
}

// A 2026-only server whose first server/discover a gateway blip refuses
// (-32022 once, a version go-sdk does not read as 2026-07-28 support) makes
// go-sdk fall back to initialize; the fallback's listing is refused as the
// wrong era, so the session ends at once and the next discovers: ready on
// 2026-07-28, with an event naming why, where the fallback was kept for
// EraReprobe and the budget ended the supervisor.
func TestE2EFallbackRefusedAsTheWrongEraDiscoversAgain(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, bounded(supervisor.Config{}))
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "server/discover", Occurrence: mcptest.FirstN(1)}, Action: refuseVersion()})
	only2026(e.srv, false)
	e.start()
	require.Equal(t, "2026-07-28", e.version())
	e.neverTerminal()
	details := e.eraChanges()
	require.Equal(t, []eraChange{
		{To: "2025-11-25", Why: "discover-refused", Op: "server/discover", Status: 400, Code: -32022},
		refused25("tools/list", false),
	}, details)
	require.Equal(t, 2, e.srv.Log().Count("server/discover"), "the blip, then the re-probe")
	require.Equal(t, 1, e.srv.Log().Count("initialize"), "one fallback")
	require.Equal(t, 1, e.srv.Log().CountFunc(func(en mcptest.Entry) bool {
		return en.Method == "tools/list" && en.ProtocolVersion == "2025-11-25"
	}), "the fallback's listing, refused once, never retried on its session")
	require.NoError(t, e.call("on-2026"))
}

// The same server refusing the fallback's initialize as well: the handshake
// fails, nothing is learned of the era, and the retry discovers.
func TestE2EFallbackHandshakeRefusedDiscoversAgain(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, bounded(supervisor.Config{}))
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "server/discover", Occurrence: mcptest.FirstN(1)}, Action: refuseVersion()})
	only2026(e.srv, true)
	e.start()
	require.Equal(t, "2026-07-28", e.version())
	e.neverTerminal()
	require.Equal(t, 2, e.srv.Log().Count("server/discover"))
	require.Equal(t, 1, e.srv.Log().Count("initialize"))
	require.Empty(t, e.eraChanges(), "the era never changed")
}

// A server that became 2026-only within the period of a fallback (the
// first discover refused once, the fallback served, then the server
// refuses every 2025 request and initialize): the next session's
// initialize, sent without a discover, is refused as the wrong era, and the
// retry discovers at once, where it sent initialize for EraReprobe.
func TestE2ELearned2025HandshakeRefusedDiscoversAgain(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, bounded(supervisor.Config{}))
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "server/discover", Occurrence: mcptest.FirstN(1)}, Action: refuseVersion()})
	e.start()
	require.Equal(t, "2025-11-25", e.version(), "fell back, and the fallback served")

	only2026(e.srv, true)
	e.sup.Reconnect()
	e.readyOn("2026-07-28")
	e.neverTerminal()
	details := e.eraChanges()
	require.Len(t, details, 2, "%v", details)
	require.Equal(t, refused25("initialize", false), details[1])
	require.Equal(t, 2, e.srv.Log().Count("initialize"), "the fallback, then the refused one")
	require.Equal(t, 2, e.srv.Log().Count("server/discover"))
	require.NoError(t, e.call("on-2026"))
}

// A live 2025 session whose server became 2026-only (every 2025 request
// answered 400 -32022; a redeployed server ignores the session id) ends at
// the first refusal and the next session discovers, once per EraReprobe:
// calls are served again on 2026-07-28.
func TestE2ELive2025SessionRefusedAsTheWrongEraDiscoversAgain(t *testing.T) {
	e := newE2E2026(t, mcptest.Options{Tools: 1}, bounded(supervisor.Config{}))
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "server/discover", Occurrence: mcptest.FirstN(1)}, Action: refuseVersion()})
	e.start()
	require.Equal(t, "2025-11-25", e.version())

	only2026(e.srv, true)
	require.Error(t, e.call("refused"))
	e.readyOn("2026-07-28")
	details := e.eraChanges()
	require.Len(t, details, 2, "%v", details)
	require.Equal(t, refused25("tools/call", true), details[1])
	require.NoError(t, e.call("on-2026"))
	require.Equal(t, 1, e.srv.Invocations(mcptest.RecordTool, "on-2026"))
	require.Zero(t, e.srv.Invocations(mcptest.RecordTool, "refused"), "refused before it ran")
}

// The reverse: a 2025-only server (go-sdk's stateful handler, which answers
// server/discover without 2026-07-28) whose fallback's first listing a
// gateway blip refuses as the wrong era (-32022 once) re-probes, is
// refused the discover again and falls back: ready on 2025-11-25, never
// stranded on 2026-07-28.
func TestE2E2025OnlyServerBlipFallsBackAgain(t *testing.T) {
	e := newE2E(t, mcptest.Options{Tools: 1}, bounded(supervisor.Config{}))
	e.srv.Gateway().Add(mcptest.Rule{Match: mcptest.Match{Verb: "POST", Method: "tools/list", Occurrence: mcptest.FirstN(1)}, Action: refuseVersion()})
	e.start()
	require.Equal(t, "2025-11-25", e.version())
	e.neverTerminal()
	details := e.eraChanges()
	require.Len(t, details, 3, "%v", details)
	require.Equal(t, "2025-11-25", details[0].To)
	require.Equal(t, "server/discover", details[0].Op)
	require.Equal(t, refused25("tools/list", false), details[1])
	require.Equal(t, "2025-11-25", details[2].To)
	require.Equal(t, "server/discover", details[2].Op)
	require.Equal(t, 2, e.srv.Log().Count("server/discover"))
	require.Equal(t, 2, e.srv.Log().Count("initialize"))
	require.NoError(t, e.call("on-2025"))
}

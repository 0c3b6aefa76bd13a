// Package soak holds mcpsup's fault soak: a test (TestSoak) that runs many
// supervisors at once against real go-sdk MCP servers behind mcptest
// gateways whose fault rules change at random, while caller goroutines run
// tool calls, and checks the promises of DESIGN.md section 2 and the failure
// stories S1-S5 under that load. The package has no API; it is test code.
//
// # Running it
//
//	go test -race -count=1 ./soak/                         # 20 s of faults
//	go test -race -count=1 -short ./soak/                  # 5 s of faults
//	go test -race -count=1 ./soak/ -soak.seed=42 -soak.duration=1m
//
// The environment variables MCPSUP_SOAK_SEED and MCPSUP_SOAK_DURATION
// (a time.ParseDuration string) set the same values when the flags are not
// given. Without a seed, one is taken from the clock; it is logged at the
// start and repeated in every failure message, so a failing run can be
// replayed with the same fault schedule (thread timing still differs).
//
// Three servers of every eight are 2026-07-28 servers (mcptest
// Sessionless2026: no session id, `server/discover`, the
// `subscriptions/listen` push stream), started fresh or from a known resume
// (a 2026-07-28 resume needs the persisted discovery result); their rules
// aim the handshake faults at `server/discover` and the stream faults at
// the listen POST.
//
// # Faults
//
// Each server's gateway gets rules from a seeded generator (math/rand/v2):
// status answers (500, 502, 503 and 429 with Retry-After, 403 HTML, 400 plain
// text, 413, 404 with and without a session id, the null-id -32000 400 that
// the TypeScript and Python SDK servers send for an unknown session), a
// connection reset, bounded latency (always below every call's deadline and
// the discovery timeouts), a GET-hostile and an idle-cutting standalone
// stream, and the unknown-session answers of other servers (null-id 400,
// no-id 400, 500). Rules target tools/call, tools/list, initialize, every
// POST, or the standalone GET. Between rule changes the generator also
// expires sessions (one, or all) and restarts the server.
//
// # Invariants
//
//   - No call is replayed: the recording tool ran at most once per call id,
//     exactly once for every call that succeeded, and never for a call whose
//     error says it was not sent. The one exception is the 2026-07-28 era's
//     MUST (changelog item 9: "A broken response stream loses the
//     in-flight request; clients MUST re-issue it as a new request with a
//     new request ID"): a call the supervisor re-issued (its CallHandler's
//     CallReissued stage) ran at most twice, at least once if it succeeded.
//   - No call hangs: every call returns by its deadline plus a grace (30 s:
//     a bound on hanging that a loaded machine still meets, not a speed test).
//   - No call is dropped or answered with an empty success: every call
//     returns; a nil error comes with the recording tool's own answer.
//   - A ready supervisor's catalog, when listed on the current generation,
//     equals the server's tool list.
//   - A resume takes at most one stale recovery.
//   - Sessions opened <= 1 + the injected faults that can end a session.
//   - Every supervisor reaches ready once the faults stop, Close returns,
//     and no goroutine is left (goleak).
//
// # Which faults can end a session
//
// The session bound counts, per server:
//
//   - every session expiry (ExpireSession, ExpireAll: the server forgets the
//     id, the next request gets 404) and every restart (every id is unknown);
//   - every request answered 404 with a session id, or 400 with the null-id
//     -32000 body: both are the session-expired signal (DESIGN.md section 3)
//     and the supervisor must replace the session;
//   - every connection reset: a transport verdict on a call replaces the
//     session, and go-sdk ends a session whose POST fails without a status;
//   - every status answer (not latency) to tools/list: a failed strict
//     listing during connecting or probing closes the new session and
//     retries with another (S1, S2);
//   - every status answer (not latency) selected by a rule on every POST:
//     it can hit a notification (notifications/initialized,
//     notifications/cancelled, a keepalive ping), which mcpsup cannot rescue
//     because it has no id, and go-sdk ends the session on it.
//
// Not counted, because DESIGN.md promises they keep the session: status
// answers to tools/call (S4: only transport failures and session expiry
// cost a session), faults on the standalone GET other than a 404 with a
// session id or a reset (S5: the stream is never fatal), faults on
// initialize (no session exists yet), latency, and the unknown-session
// answers (they only fire for a session an expiry or restart already ended,
// which was counted then).
package soak

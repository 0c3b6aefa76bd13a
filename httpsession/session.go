package httpsession

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/internal/handshakectx"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// Era is a hint of the protocol era a server speaks: the handshake go-sdk
// starts with.
type Era uint8

const (
	// EraAuto (the default) lets go-sdk try `server/discover` first and
	// fall back to `initialize`; a [Dialer] keeps the era learned.
	EraAuto     Era = iota
	Era2025         // `initialize` at 2025-11-25
	Era20260728     // `server/discover` at 2026-07-28
)

const (
	era2025     = "2025-11-25"
	era20260728 = "2026-07-28"
)

var eraNames = [...]string{EraAuto: "auto", Era2025: era2025, Era20260728: era20260728}

// String returns "auto" or the era's protocol version; "unknown" past them.
func (e Era) String() string {
	if int(e) < len(eraNames) {
		return eraNames[e]
	}
	return "unknown"
}

// StreamMode chooses whether sessions open the standalone stream (the GET,
// or the 2026-07-28 subscriptions/listen): a [StreamSwitch]'s policy
// (failure story S5).
type StreamMode uint8

const (
	// StreamAuto (the default) opens the stream until the server proves
	// GET-hostile ([HostilityRule]) for [SwitchConfig.Memory].
	StreamAuto StreamMode = iota
	StreamOn              // always opened, re-dialed on [StreamConfig]'s backoff
	StreamOff             // never opened: a call or a keepalive finds a dead session
)

var streamModeNames = [...]string{StreamAuto: "auto", StreamOn: "on", StreamOff: "off"}

// String returns "auto", "on" or "off"; "invalid" past them.
func (m StreamMode) String() string {
	if int(m) < len(streamModeNames) {
		return streamModeNames[m]
	}
	return "invalid"
}

// Options configure [Open] and [Resume]. Only Endpoint, the MCP endpoint
// URL, is required.
type Options struct {
	Endpoint string
	// HTTPClient is the host's client: its Transport (nil:
	// http.DefaultTransport) carries the requests, its Jar and Timeout are
	// [Config.Jar] and [Config.RequestTimeout]. nil: http.DefaultClient.
	HTTPClient *http.Client
	// Client is the go-sdk client (the host's handlers and capabilities);
	// nil: a client named "mcpsup" with [FactsMiddleware].
	Client *mcp.Client
	// ClientInfo names the client in [Session.Discover]'s `_meta`
	// (2026-07-28 changelog: clients SHOULD identify themselves on each
	// request). nil: {Name: "mcpsup", Version: "v0"}.
	ClientInfo *mcp.Implementation
	// Era is the handshake hint for [Open]; [Resume] uses the persisted
	// protocol version instead.
	Era Era
	// Stream is the mode of the session's own switch when Wire.Switch is
	// nil; a shared switch's mode decides otherwise.
	Stream StreamMode
	// Wire configures the HTTP side; its Base is replaced by HTTPClient's
	// transport when that is set.
	Wire Config
	// Observe gets the session's typed facts (session.StreamRestored: the
	// push stream back after a gap, re-list what is cached, failure story
	// S5; session.StreamDeclined: poll; session.EventDropped;
	// session.ResponseDropped), on the goroutine that observed each; it
	// must not block. nil: none wanted.
	Observe func(session.Fact)

	shared *Config // a Dialer's, in place of Wire and HTTPClient
	on     hooks   // a Dialer's fallback of the handshake
}

// Session is one streamable HTTP session: a go-sdk client session on its
// own mcp.Connection, and the one owner of its end, reported once, the
// first cause winning (session.End: Done, Err, Status, AfterEnd): a session-gone
// answer or a refusal of its era (a *classify.HTTPError carrying it), Fail,
// Close (session.ErrClosed) or Detach (session.ErrDetached). Its methods
// are safe for concurrent use.
type Session struct {
	session.End
	cs         *mcp.ClientSession
	c          *conn // sends the Session's own requests too (discover.go)
	info       session.Info
	probes     atomic.Uint64 // numbers the Session's own requests
	connected  atomic.Bool   // the handshake succeeded: cs is set
	clientInfo *mcp.Implementation

	mu    sync.Mutex
	first error // the first cause recorded (an *endingAnswer), nil before
	// eraWatch reports an answer that refuses the era, ending the session
	// once (endedForEra); nil: not watched, or ended.
	eraWatch func(Exchange) bool
}

// Open connects with a full handshake (`initialize`, or `server/discover`)
// as opts.Era directs. A session id that is not visible ASCII, or longer
// than [MaxSessionIDLen], fails the handshake with an error unwrapping to a
// *[StateError], and the session the server made gets one DELETE, best
// effort. A refused fallback after a `server/discover` outage fails with a
// *classify.HTTPError wrapping the [*DiscoverOutageError]. Other errors are
// go-sdk's, annotated ([Annotate]). Redirects are never followed.
func Open(ctx context.Context, opts Options) (*Session, error) {
	var version string
	if opts.Era == Era2025 || opts.Era == Era20260728 {
		version = opts.Era.String()
	}
	return connect(ctx, opts, version, nil)
}

// Resume re-attaches the persisted session st without a handshake on the
// wire: it is answered locally, every request carries the persisted
// Mcp-Session-Id and Mcp-Protocol-Version, and go-sdk's request ids go out
// moved by a random shift (idshift.go). A nil st.InitializeResult makes the
// resume blind ([Session.Blind], failure story S1). Nothing checks the
// session is alive. An invalid st is refused with a *[StateError].
func Resume(ctx context.Context, opts Options, st ResumeState) (*Session, error) {
	if err := st.Validate(); err != nil {
		return nil, err
	}
	h := &handshake{protocolVersion: st.ProtocolVersion, sessionID: st.SessionID, result: st.InitializeResult}
	return connect(ctx, opts, st.ProtocolVersion, h)
}

// defaultClientInfo is only read, by go-sdk too.
var defaultClientInfo = &mcp.Implementation{Name: "mcpsup", Version: "v0"}

func connect(ctx context.Context, opts Options, version string, h *handshake) (*Session, error) {
	cfg := opts.shared
	if cfg == nil {
		w := opts.Wire.withDefaults(opts.HTTPClient)
		w.Switch = cmp.Or(w.Switch, NewStreamSwitch(SwitchConfig{Mode: opts.Stream, Clock: w.Clock}))
		cfg = &w
	}
	client := opts.Client
	if client == nil {
		client = mcp.NewClient(defaultClientInfo, nil)
		client.AddSendingMiddleware(FactsMiddleware())
	}
	c := newConn(cfg, opts.Endpoint, h, cfg.Switch.Mode() != StreamOff)
	s := &Session{c: c, clientInfo: cmp.Or(opts.ClientInfo, defaultClientInfo)}
	c.on = opts.on
	c.on.observe = opts.Observe
	c.on.exchange = s.exchange
	hs := handshakectx.New(ctx) // go-sdk keeps Connect's context for the session's life
	ctx, release := withConnectExchange(hs)
	defer release()
	cs, err := client.Connect(ctx, sessionConn{c, s}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, c.handshakeError(ctx, err) // era.go
	}
	hs.Release()
	s.cs, s.info.ID = cs, c.SessionID()
	if r := cs.InitializeResult(); r != nil {
		s.info.ProtocolVersion, s.info.Initialize = r.ProtocolVersion, r
	}
	if h != nil && h.result == nil {
		s.info.Initialize = nil // blind
	}
	if s.connected.Store(true); c.failure() != nil { // closed before: sessionConn.Close did not see it
		go s.ended()
	}
	return s, nil
}

// sessionConn is the conn as go-sdk holds it: go-sdk closes it as its
// session ends, and the Session's end follows (no goroutine waits while
// the session lives).
type sessionConn struct {
	*conn
	s *Session
}

func (sc sessionConn) Connect(context.Context) (mcp.Connection, error) { return sc, nil }

func (sc sessionConn) Close() error {
	err := sc.conn.Close()
	if sc.s.connected.Load() { // not a failed handshake's
		go sc.s.ended()
	}
	return err
}

// ended ends the session once go-sdk's has ended.
func (s *Session) ended() { s.End.Fail(s.cause(s.cs.Wait())) }

// ClientSession returns the go-sdk session.
func (s *Session) ClientSession() *mcp.ClientSession { return s.cs }

// ID returns the session id: from the successful handshake answer, or the
// persisted one for a resume; "" for a sessionless server.
func (s *Session) ID() string { return s.info.ID }

// ProtocolVersion returns the negotiated (or persisted) protocol version.
func (s *Session) ProtocolVersion() string { return s.info.ProtocolVersion }

// InitializeResult returns what the server declared, or nil after a blind
// resume (capabilities unknown).
func (s *Session) InitializeResult() *mcp.InitializeResult { return s.info.Initialize }

// Blind reports a blind resume: the server's capabilities are unknown.
func (s *Session) Blind() bool { return s.info.Initialize == nil }

// ResumeState returns the state to persist for a later [Resume].
func (s *Session) ResumeState() ResumeState {
	return ResumeState{SessionID: s.info.ID, ProtocolVersion: s.info.ProtocolVersion, InitializeResult: s.info.Initialize}
}

// Wait blocks until the go-sdk session ends and returns its error.
func (s *Session) Wait() error { return s.cs.Wait() }

// Close ends the session and the server-side session with DELETE (none for
// a sessionless or gone one), cutting the answer streams' drains
// ([AfterAnswers]), and waits for its end. Idempotent. Like go-sdk's
// ClientSession.Close it waits for the calls in flight: cancel their
// contexts first to end them at once.
func (s *Session) Close() error { return s.stop(session.ErrClosed, false) }

// Detach is Close without DELETE, so the server-side session stays alive
// for a later [Resume]; after Close it has no effect.
func (s *Session) Detach() error { return s.stop(session.ErrDetached, true) }

func (s *Session) stop(cause error, detach bool) error {
	s.record(cause)
	err := s.end(detach)
	<-s.Done()
	return err
}

// end closes the go-sdk session, detached (no DELETE) or not.
func (s *Session) end(detach bool) error {
	if detach {
		s.c.detach()
	}
	s.c.drains.close()
	s.c.resps.close()
	if err := s.cs.Close(); !errors.Is(err, mcp.ErrConnectionClosed) {
		return err
	}
	return nil
}

// ErrSessionEnded is the end of a session go-sdk ended by itself without
// an error of its own (its connection closed).
var ErrSessionEnded = errors.New("mcpsup/httpsession: session ended")

// endingAnswer is a recorded cause: the answer x (session gone, or its era
// refused) ends the session.
type endingAnswer struct{ x Exchange }

func (e *endingAnswer) Error() string { return "mcpsup/httpsession: ended by an answer" }

// record keeps err as the session's cause unless one came first.
func (s *Session) record(err error) {
	s.mu.Lock()
	if s.first == nil {
		s.first = err
	}
	s.mu.Unlock()
}

// cause is why the session ended, go-sdk's wait having returned err.
func (s *Session) cause(err error) error {
	s.mu.Lock()
	first := s.first
	s.mu.Unlock()
	if a, ok := first.(*endingAnswer); ok {
		return &classify.HTTPError{Exchange: a.x, Err: err}
	}
	return cmp.Or(first, err, ErrSessionEnded)
}

// Fail ends the session with err (session.Verify) unless it ended already;
// a cause recorded first (a session-gone answer) stays its cause.
func (s *Session) Fail(err error) bool {
	s.record(err)
	return s.End.Fail(s.cause(err))
}

// Info is what the handshake (or the persisted state) established.
func (s *Session) Info() session.Info { return s.info }

// Alive pings a 2025-era session; a 2026-07-28 one has no ping (go-sdk
// answers -32601), so it sends server/discover ([Session.Discover]).
func (s *Session) Alive(ctx context.Context) error {
	ctx = WithExchange(ctx)
	if !msgcheck.ModernVersion(s.info.ProtocolVersion) {
		return Annotate(ctx, s.cs.Ping(ctx, nil))
	}
	return Annotate(ctx, s.Discover(ctx))
}

// endedForEra records x as the session's cause and stops the era watch:
// once per session.
func (s *Session) endedForEra(x Exchange) bool {
	s.mu.Lock()
	watched := s.eraWatch != nil
	s.eraWatch = nil
	s.mu.Unlock()
	if watched {
		s.record(&endingAnswer{x})
	}
	return watched
}

// exchange watches the session's answers: a refusal of its era (eraWatch)
// or a session-gone answer ends it.
func (s *Session) exchange(x Exchange) {
	if x.Local {
		return
	}
	s.mu.Lock()
	watch := s.eraWatch
	s.mu.Unlock()
	if watch != nil && watch(x) {
		return // a refusal of the era ends the session, or passes: re-discoveries are spaced
	}
	if x.SessionGone {
		s.record(&endingAnswer{x}) // only a session-gone answer ends a session
	}
}

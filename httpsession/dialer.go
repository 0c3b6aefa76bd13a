package httpsession

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// DialerOptions configure a [Dialer]. Only Endpoint is required; every
// other zero field is its default.
type DialerOptions struct {
	Endpoint   string              // the MCP endpoint URL
	HTTPClient *http.Client        // the host's client ([Options.HTTPClient]); nil: http.DefaultClient
	ClientInfo *mcp.Implementation // [Options.ClientInfo]
	// Era is the host's era hint: [Era2025] is kept for good, any other is
	// learned from the sessions opened (decision record 0013).
	Era Era
	// EraReprobe is how long a learned 2025 era lasts. 0 means
	// [DefaultEraReprobe] (10 min); negative: for good.
	EraReprobe time.Duration
	// ResumedVersion is the protocol version of the persisted session the
	// supervisor resumes, if any: under [EraAuto] the era starts from it.
	ResumedVersion string
	// Stream configures the stream decision every session shares; its
	// OnStream gets each change (a session.StreamDecided, of no one
	// session); its Clock is Transport's.
	Stream SwitchConfig
	// AnswerLimits bound the answers of every session, in place of the
	// Config's own bounds.
	AnswerLimits AnswerLimits
	// Transport configures every session ([Options.Wire]); its Switch,
	// OnExchange and FallbackAfterOutage are the dialer's (facts reach
	// session.Spec.Observe).
	Transport Config
	// Served reports whether the session of a generation has served (past
	// its handshake and first listing): a refusal of its era then ends it
	// at most once per EraReprobe. nil: every session is still opening.
	Served func(generation uint64) bool
}

// Dialer opens the streamable HTTP sessions of one supervisor
// (session.Dialer) and keeps what outlives a session: the era (changes are
// session.EraChanged facts to the Spec's Observe) and the stream decision
// (changes to DialerOptions.Stream.OnStream). Safe for concurrent use;
// Close stops the decision's timer.
type Dialer struct {
	endpoint string
	info     *mcp.Implementation
	served   func(generation uint64) bool
	cfg      *Config // every session's, shared: defaults applied, never written
	era      *eraMemory
	streams  *StreamSwitch
}

var _ session.Dialer = (*Dialer)(nil)

// NewDialer returns a Dialer configured by opts.
func NewDialer(opts DialerOptions) *Dialer {
	cfg := opts.Transport
	opts.AnswerLimits.apply(&cfg)
	cfg.OnExchange = nil
	cfg.FallbackAfterOutage = false // the dialer's: hooks
	cfg = cfg.withDefaults(opts.HTTPClient)
	d := &Dialer{endpoint: opts.Endpoint, info: opts.ClientInfo, served: opts.Served,
		cfg: &cfg, era: newEraMemory(opts.Era, opts.EraReprobe)}
	if opts.Era == EraAuto && opts.ResumedVersion != "" {
		d.era.learn(cfg.Clock.Now(), opts.ResumedVersion, nil)
	}
	opts.Stream.Clock = cfg.Clock
	d.streams = NewStreamSwitch(opts.Stream)
	d.cfg.Switch = d.streams // every session inherits the decision
	return d
}

// StreamDecision is the stream decision now, as the resume state keeps it.
func (d *Dialer) StreamDecision() session.StreamDecided { return d.streams.Decision() }

// Close stops the stream decision's timer; sessions close on their own.
func (d *Dialer) Close() error {
	d.streams.Close()
	return nil
}

// Dial opens a new session with a full handshake, in the era remembered.
func (d *Dialer) Dial(ctx context.Context, spec session.Spec) (session.Endable, error) {
	return d.open(spec, func(opts Options) (*Session, error) { return Open(ctx, opts) })
}

// Attach re-attaches spec.Resume without a handshake on the wire (see
// [Resume]); a spec without one is refused with session.ErrNoResume.
func (d *Dialer) Attach(ctx context.Context, spec session.Spec) (session.Endable, error) {
	if spec.Resume == nil {
		return nil, session.ErrNoResume
	}
	st := ResumeState(*spec.Resume)
	return d.open(spec, func(opts Options) (*Session, error) { return Resume(ctx, opts, st) })
}

// open opens a session with open, in the era remembered, and learns the
// era it negotiated.
func (d *Dialer) open(spec session.Spec, open func(Options) (*Session, error)) (session.Endable, error) {
	observe := spec.Observe
	if observe == nil {
		observe = func(session.Fact) {}
	}
	era, fallback := d.era.next(d.cfg.Clock.Now())
	opts := Options{Endpoint: d.endpoint, Era: era, ClientInfo: d.info, shared: d.cfg, Observe: observe, on: hooks{fallback: fallback}}
	if spec.Client != nil {
		opts.Client = spec.Client(FactsMiddleware())
	}
	s, err := open(opts)
	if err != nil {
		if c := d.era.dialFailed(era, err); c != nil {
			observe(*c)
		}
		return nil, err
	}
	if c := d.era.learn(d.cfg.Clock.Now(), s.info.ProtocolVersion, s.c.discovered()); c != nil {
		observe(*c)
	}
	d.watchEra(spec.Generation, s, observe)
	return dialed{s, session.NewClientRequests(s.cs)}, nil
}

// dialed is a Dialer's session as session.Endable: with go-sdk's requests.
type dialed struct {
	*Session
	session.ClientRequests
}

// watchEra ends a session whose request is answered with a refusal of its
// era ([VersionRefusal] on 2026-07-28, [LegacyRefusal] on 2025 unless
// pinned), detached, so that the next session discovers again.
func (d *Dialer) watchEra(gen uint64, s *Session, observe func(session.Fact)) {
	version := s.info.ProtocolVersion
	refusal := VersionRefusal
	if !msgcheck.ModernVersion(version) {
		if d.era.pinned {
			return
		}
		refusal = LegacyRefusal
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eraWatch = func(x Exchange) bool {
		if !refusal(x) {
			return false
		}
		served := d.served != nil && d.served(gen)
		if d.era.refused(d.cfg.Clock.Now(), served) && s.endedForEra(x) {
			why := session.EraRefusedOpening
			if served {
				why = session.EraRefusedLive
			}
			observe(*eraChange(version, "", why, x))
			go func() { _ = s.end(true) }() // not on the conn's goroutine, which is inside a request
		}
		return true
	}
}

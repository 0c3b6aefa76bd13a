package stdio

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/internal/handshakectx"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// Options configure a Dialer. The zero value of every field but
// Command.Path is a documented default.
type Options struct {
	Command Command // the server's process (Command.WithDefaults applied)
	Name    string  // names the server in logs; default Command.Path
	// ProtocolVersion is the version the first handshake asks for (e.g.
	// "2025-11-25"); later ones ask for the last negotiated. Default "":
	// go-sdk's latest.
	ProtocolVersion string
	// Logger logs the server's stderr, its dropped stdout lines (quoted, at
	// Debug) and its exit. Default: discard.
	Logger *slog.Logger
	// Limits bound the server's messages before go-sdk decodes them.
	Limits msgcheck.Limits
	// MaxResponses bounds the responses to the server's requests written at
	// once; one past it is dropped (session.ResponseDropped). Default
	// session.DefaultMaxResponsesInFlight.
	MaxResponses int
	Redactor     *events.Redactor // masks the stderr tail; default nil: the patterns only
}

// Dialer starts a Command's process for every Dial (a session.Dialer).
// Safe for concurrent use.
type Dialer struct {
	opts Options

	version atomic.Value // string: the protocol version to ask for: Options.ProtocolVersion, then learned
}

var _ session.Dialer = (*Dialer)(nil)

// NewDialer returns a Dialer of o, its zero fields set to their defaults.
// It checks nothing: Command.Validate does.
func NewDialer(o Options) *Dialer {
	o.Command = o.Command.WithDefaults()
	o.Name = cmp.Or(o.Name, o.Command.Path)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Limits = o.Limits.WithDefaults()
	if o.MaxResponses <= 0 {
		o.MaxResponses = session.DefaultMaxResponsesInFlight
	}
	d := &Dialer{opts: o}
	d.version.Store(o.ProtocolVersion)
	return d
}

// Attach returns session.ErrNoResume: a process cannot be re-attached.
func (d *Dialer) Attach(context.Context, session.Spec) (session.Endable, error) {
	return nil, session.ErrNoResume
}

// Dial starts the process and runs the handshake, bounded by ctx; a failed
// handshake stops the process, and one the exit failed unwraps to both the
// *ProcessExitError and the handshake's error. Facts go to spec.Observe.
// Not mcp.CommandTransport, which hands go-sdk the raw stdout, leaves the
// process in the host's process group and has one grace for both stop steps.
func (d *Dialer) Dial(ctx context.Context, spec session.Spec) (session.Endable, error) {
	o := d.opts
	observe := spec.Observe
	if observe == nil {
		observe = func(session.Fact) {}
	}
	f := &stdoutFilter{max: o.Command.MaxLineBytes, dropped: func(d session.LineDropped, detail string) {
		o.Logger.Debug("mcpsup: stdio server stdout line dropped", "server", o.Name, "count", d.Count, "why", d.Why, "detail", detail)
		observe(d)
	}}
	conn := newMarkingConn(f.drop, func(n int) { observe(session.ResponseDropped{Count: n, Bound: o.MaxResponses}) }, o.MaxResponses, o.Limits)
	f.refuse = conn.refuse // before the filter runs
	errLog := &stderrLog{server: o.Name, log: o.Logger, keep: o.Command.StderrTail, redact: o.Redactor}
	p, err := startProc(o.Command, f, conn, errLog, func(e *ProcessExitError) { observe(session.ProcessExited{Err: e}) })
	if err != nil {
		return nil, err
	}
	s := &stdioSession{p: p, watched: make(chan struct{})}
	var cl *mcp.Client
	if spec.Client != nil {
		cl = spec.Client(s.facts)
	} else {
		cl = mcp.NewClient(&mcp.Implementation{Name: "mcpsup", Version: "0"}, nil)
		cl.AddSendingMiddleware(s.facts)
	}
	version := d.version.Load().(string)
	conn.stdin = p.stdin
	hs := handshakectx.New(ctx) // go-sdk keeps Connect's context for the session's life
	cs, err := cl.Connect(hs, conn, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		if ctx.Err() != nil {
			p.stop() // the handshake took too long: the process is of no use
		} else {
			p.stopUnlessExiting()
		}
		if exit := p.wait(); exit != nil && exit.Stop == StopNone {
			// The process died during the handshake: that is the news, first.
			return nil, fmt.Errorf("%w during the handshake: %w", exit, err)
		}
		return nil, err
	}
	hs.Release()
	info := session.Info{ProtocolVersion: version, Initialize: cs.InitializeResult()}
	if res := info.Initialize; res != nil {
		info.ProtocolVersion = res.ProtocolVersion
		d.version.Store(res.ProtocolVersion)
	}
	s.start(cs, info)
	return s, nil
}

package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/supervisor"
)

// AddServers adds every supported server of f (see Add), each of f's
// warnings a KindConfigWarning event. It returns the errors of the servers
// it could not add, joined; the others are added all the same.
func (h *Hub) AddServers(ctx context.Context, f *ServersFile) error {
	for _, w := range f.Warnings {
		h.emit(events.Event{Kind: KindConfigWarning, Server: w.Server, Detail: w.String()})
	}
	// Every entry's credentials first: no stdio server may inherit them.
	for _, sc := range slices.Concat(f.Servers, f.Unsupported, f.Disabled) {
		h.creds.note(sc)
	}
	var errs []error
	for _, sc := range f.Servers {
		if err := h.Add(ctx, sc); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Add adds a server and queues it to start, resuming the state the Store
// holds for it; a state that cannot be used starts it fresh after a
// KindStoreFailed event. With a Leaser it stands by until its lease is
// acquired. Errors: a *ServerError wrapping ErrDuplicate, ErrNameTooLong,
// ErrServerName, ErrUnsupported, ErrClosed, ErrSharedCredential,
// ErrUnsetVariable or the supervisor's validation error (a bad URL).
func (h *Hub) Add(ctx context.Context, sc ServerConfig) error {
	fail := func(err error) error { return &ServerError{Server: sc.Name, Err: err} }
	if sc.Name == "" {
		return fail(errors.New("empty server name"))
	}
	if err := checkNameLength(sc.Name); err != nil {
		return fail(err)
	}
	if ok, why := sc.Supported(); !ok {
		return fail(fmt.Errorf("%w: %s", ErrUnsupported, why))
	}
	if h.cfg.Supervisor.HTTP.OAuthHandler != nil {
		return fail(ErrSharedCredential)
	}
	h.creds.note(sc)
	headers, took, err := expandHeaders(sc.Headers, h.cfg.LookupEnv)
	if err != nil {
		return fail(err)
	}
	ns, err := namespace(h.cfg.Naming, sc.Name)
	if err != nil {
		return fail(err)
	}
	h.mu.Lock()
	err = ErrClosed
	if h.life.Err() == nil {
		err = h.taken.take(sc.Name, ns)
	}
	h.mu.Unlock()
	if err != nil {
		return fail(err)
	}

	h.redact.AddEndpointSecrets(sc.URL)
	secrets := append(slices.Collect(maps.Values(headers)), took...)
	for _, v := range append(secrets, slices.Collect(maps.Values(sc.Env))...) {
		h.redact.AddLikelySecret(v)
	}
	h.redact.AddCommandLineSecrets(sc.Args)
	e := &entry{name: sc.Name, sc: sc, headers: headers, secrets: secrets, since: h.cfg.Supervisor.Observe.Clock.Now()}
	if h.cfg.Credentials != nil {
		e.oauth = h.cfg.Credentials(sc)
	}
	e.ctx, e.stop = context.WithCancel(h.life)
	undo := func(err error) error {
		e.stop()
		h.mu.Lock()
		h.taken.free(sc.Name)
		h.mu.Unlock()
		return fail(err)
	}
	leased := h.leaser != nil && sc.Command == ""
	var rs *supervisor.ResumeState
	if leased {
		e.leaseDone = make(chan struct{})
	} else {
		rs, _ = h.load(ctx, sc)
	}
	if e.sup, err = h.newSupervisor(e, rs, nil); err != nil {
		return undo(err)
	}
	h.mu.Lock()
	if h.life.Err() != nil {
		h.mu.Unlock()
		return undo(ErrClosed)
	}
	h.servers[sc.Name] = e
	h.notifyLocked()
	h.mu.Unlock()
	// Announced before it starts, so its own events follow.
	added := events.Event{Kind: KindServerAdded, Server: sc.Name, SessionID: resumed(rs)}
	if leased {
		added.Op = "standby"
	}
	h.emit(added)
	if !leased {
		h.queueStart(e.ctx, e.sup)
	} else if !h.spawn(e.ctx, func() { h.holdLease(e) }) {
		close(e.leaseDone)
	}
	return nil
}

// spawn runs f on a goroutine Close and Detach wait for; false when ctx
// (the hub's life or a child of it) ended.
func (h *Hub) spawn(ctx context.Context, f func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	h.workers.Go(f)
	return true
}

// queueStart starts sup, at most Config.MaxStarting at once, unless ctx
// ends first.
func (h *Hub) queueStart(ctx context.Context, sup *supervisor.Supervisor) {
	h.spawn(ctx, func() {
		select {
		case h.starting <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-h.starting }()
		if ctx.Err() == nil {
			sup.Start()
			settle(ctx, sup)
		}
	})
}

// newSupervisor makes a supervisor of the server from the template (see
// Config.Supervisor) that resumes rs (checked by load); with a gate, every
// request passes the gate.
func (h *Hub) newSupervisor(e *entry, rs *supervisor.ResumeState, gate *holdGate) (*supervisor.Supervisor, error) {
	var self *supervisor.Supervisor // set before it starts, read by its sink
	scfg := h.cfg.Supervisor
	scfg.Name, scfg.Endpoint, scfg.Resume = e.name, e.sc.URL, rs
	scfg.Command = e.sc.command(scfg.Command)
	if scfg.Command != nil { // supervisor.New refuses HTTP settings for stdio
		scfg.Command.Inherit = h.creds.inherit(scfg.Command.Inherit)
		scfg.HTTP, scfg.Stream = supervisor.HTTPConfig{}, supervisor.StreamConfig{}
	} else {
		scfg.HTTP.OAuthHandler = e.oauth
		if len(e.headers) > 0 || gate != nil {
			scfg.HTTP.HTTPClient = serverClient(scfg.HTTP.HTTPClient, e.headers, gate)
		}
	}
	scfg.Observe.Logger = slog.New(events.RedactingHandler(&h.redact, scfg.Observe.Logger.Handler()))
	if h.cfg.ServerMiddleware != nil { // clipped: the template's array stays unwritten
		scfg.Client.SendingMiddleware = append(slices.Clip(scfg.Client.SendingMiddleware), h.cfg.ServerMiddleware(e.name))
	}
	scfg.Observe.Secrets = append(slices.Clip(scfg.Observe.Secrets), e.secrets...)
	scfg.Observe.Events = events.SinkFunc(func(ev events.Event) { h.observe(e, self, ev) })
	sup, err := supervisor.New(scfg)
	self = sup
	return sup, err
}

// resumed is the hash of the session rs resumes; "" for none.
func resumed(rs *supervisor.ResumeState) string {
	if rs == nil {
		return ""
	}
	return events.HashSessionID(rs.SessionID)
}

// load returns the server's stored resume state; nil when there is none or
// it cannot be used (an event says why: see Store.Load, and a state the
// supervisor would refuse); the error when the Store did not answer.
func (h *Hub) load(ctx context.Context, sc ServerConfig) (*supervisor.ResumeState, error) {
	if h.cfg.Store == nil || sc.Command != "" { // a process has no state to resume
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.StoreTimeout)
	defer cancel()
	rs, err := h.cfg.Store.Load(ctx, sc.Name)
	switch {
	case err != nil || rs == nil:
	case rs.Endpoint != sc.URL:
		// Its own redactor: in the hub's, its query values would be masked everywhere.
		var foreign events.Redactor
		foreign.AddEndpointSecrets(rs.Endpoint)
		err = &StoreError{Op: "load", Server: sc.Name,
			Err: fmt.Errorf("%w: saved for endpoint %q, not %q", ErrForeign, foreign.Text(msgcheck.CutText(rs.Endpoint, 200)), sc.URL)}
	default:
		if verr := rs.Validate(); verr != nil { // from a Store that does not parse with ParseState
			err = &StoreError{Op: "load", Server: sc.Name, Err: errors.Join(ErrCorrupt, verr)}
		}
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, nil
	case err != nil:
		h.storeFailed("load", sc.Name, err)
		if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrForeign) {
			return nil, nil
		}
		return nil, err
	}
	return rs, nil
}

func settle(ctx context.Context, sup *supervisor.Supervisor) {
	for {
		st := sup.State()
		if st == supervisor.Ready || st == supervisor.Failed || st == supervisor.Closed {
			return
		}
		if !sup.WaitForStateChange(ctx, st) {
			return
		}
	}
}

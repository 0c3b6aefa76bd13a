package httpsession

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/msgcheck"
	"github.com/mcpsup/mcpsup/session"
)

// JSON-RPC error codes (MCP SEP-2575) refusing a request's protocol
// version or headers.
const (
	CodeHeaderMismatch                    = -32020 // the Mcp-* headers do not match the body
	CodeMissingRequiredClientCapabilities = -32021
	CodeUnsupportedProtocolVersion        = -32022 // the request's protocol version is not spoken
)

// EraRefusal reports whether x refuses the 2026-07-28 era: HTTP 400 whose
// JSON-RPC error is -32020, -32021 or -32022.
func EraRefusal(x Exchange) bool {
	return x.Status == http.StatusBadRequest && x.RPC.Present && (x.RPC.Code == CodeHeaderMismatch ||
		x.RPC.Code == CodeMissingRequiredClientCapabilities || x.RPC.Code == CodeUnsupportedProtocolVersion)
}

// VersionRefusal reports whether x refuses the request's protocol version
// (HTTP 400, JSON-RPC -32022): on a live 2026-07-28 session, a server rolled
// back to 2025. -32020 and -32021 refuse one request, not the era.
func VersionRefusal(x Exchange) bool {
	return x.Status == http.StatusBadRequest && x.RPC.Present && x.RPC.Code == CodeUnsupportedProtocolVersion
}

// LegacyRefusal reports whether x, the answer to a 2025-era request, is a
// modern error that identifies a 2026-07-28 server (streamable-http.mdx,
// "Backward Compatibility"): HTTP 400 with -32022 or -32020, or, to
// `initialize`, 404 with -32601 (Method not found).
func LegacyRefusal(x Exchange) bool {
	switch {
	case !x.RPC.Present:
		return false
	case x.Status == http.StatusBadRequest:
		return x.RPC.Code == CodeUnsupportedProtocolVersion || x.RPC.Code == CodeHeaderMismatch
	}
	return x.Status == http.StatusNotFound && x.Method == methodInitialize && x.RPC.Code == classify.CodeMethodNotFound
}

// DiscoverOutage reports whether x, a `server/discover`'s answer, says
// nothing of the era (decision record 0013): no HTTP answer, a stream lost
// before its response ([Exchange.StreamLost]), 408, 429 or a 5xx but 501.
func DiscoverOutage(x Exchange) bool {
	return x.TransportErr != nil || x.StreamLost || outageStatus(x.Status)
}

// ErrDiscoverOutage is matched (errors.Is) by every [*DiscoverOutageError].
var ErrDiscoverOutage = errors.New("mcpsup/httpsession: server/discover got no answer")

// DiscoverOutageError fails go-sdk's fallback `initialize` after a
// [DiscoverOutage] unless [Config.FallbackAfterOutage]: the handshake is
// retried rather than settling for the 2025 era.
type DiscoverOutageError struct {
	Discover Exchange
}

func (e *DiscoverOutageError) Error() string {
	x, what := e.Discover, "no HTTP answer"
	if x.Status != 0 {
		what = fmt.Sprintf("HTTP %d", x.Status)
	}
	if x.RPC.Present {
		what += fmt.Sprintf(", JSON-RPC %d", x.RPC.Code)
	}
	if x.TransportErr != nil {
		what += " (" + x.TransportErr.Error() + ")"
	}
	return "mcpsup/httpsession: server/discover got " + what + "; not falling back to initialize on an outage"
}

func (e *DiscoverOutageError) Is(target error) bool { return target == ErrDiscoverOutage }

// Unwrap returns the discover's transport error, if any.
func (e *DiscoverOutageError) Unwrap() error { return e.Discover.TransportErr }

// amendDiscover amends the record of the discover requestID, whose event
// stream failed after the headers.
func (c *conn) amendDiscover(requestID string, f func(*Exchange)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.discover != nil && c.discover.RequestID == requestID {
		f(c.discover)
	}
}

// discovered returns a copy of the record of the session's discover, nil
// when none was sent.
func (c *conn) discovered() *Exchange {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.discover == nil {
		return nil
	}
	x := *c.discover
	return &x
}

// refuseFallback fails go-sdk's fallback `initialize`, x its record, after
// a discover outage.
func (c *conn) refuseFallback(x *Exchange) error {
	if x.Method != methodInitialize || c.cfg.FallbackAfterOutage || c.on.fallback {
		return nil
	}
	d := c.discovered()
	if d == nil || !DiscoverOutage(*d) {
		return nil
	}
	err := &DiscoverOutageError{Discover: *d}
	x.Local, x.TransportErr = true, err
	c.mu.Lock()
	c.outage = err
	c.mu.Unlock()
	return err
}

// handshakeError annotates go-sdk's Connect error: after a refused fallback
// with the discover's facts; an invalid session id first.
func (c *conn) handshakeError(ctx context.Context, err error) error {
	c.mu.Lock()
	oe, refused := c.outage, c.refused
	c.mu.Unlock()
	if oe != nil {
		err = &classify.HTTPError{Exchange: oe.Discover, Err: oe}
	} else {
		err = Annotate(ctx, err)
	}
	if refused != nil {
		err = fmt.Errorf("%w: %w", refused, err)
	}
	return err
}

// resumesStreams reports whether a broken answer stream of protocol version
// v is resumed with Last-Event-ID (2025-11-25), not lost (2026-07-28,
// changelog item 9; decision record 0009).
func resumesStreams(v string) bool { return !msgcheck.ModernVersion(v) }

// DefaultEraReprobe is DialerOptions.EraReprobe's default.
const DefaultEraReprobe = 10 * time.Minute

// maxDiscoverOutages is how many handshakes in a row may fail on a discover
// outage before the next lets go-sdk fall back to `initialize`.
const maxDiscoverOutages = 3

// eraMemory is the one owner of a supervisor's era, learned from the
// sessions opened (decision record 0013). Safe for concurrent use.
type eraMemory struct {
	pinned  bool // the host's Era2025: never probed
	reprobe time.Duration

	mu        sync.Mutex
	era       Era
	until     time.Time // when a learned 2025 era ends; zero: for good (or not 2025)
	outages   int       // handshakes in a row whose discover met an outage
	liveShown time.Time // the last live-session refusal acted on
}

func newEraMemory(era Era, reprobe time.Duration) *eraMemory {
	return &eraMemory{era: era, pinned: era == Era2025, reprobe: cmp.Or(reprobe, DefaultEraReprobe)}
}

// next returns the era the next handshake starts with at now, and whether
// go-sdk may fall back to `initialize` after a discover outage.
func (m *eraMemory) next(now time.Time) (Era, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	era := m.era
	if era == Era2025 && !m.until.IsZero() && !now.Before(m.until) {
		era = EraAuto // the fallback ran out: probe server/discover again
	}
	return era, m.outages >= maxDiscoverOutages
}

// learn keeps the era of version, negotiated or persisted ("": nothing),
// discover the session's discover record or nil; it returns the change or
// nil.
func (m *eraMemory) learn(now time.Time, version string, discover *Exchange) *session.EraChanged {
	if version == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.outages = 0
	was := m.era
	if msgcheck.ModernVersion(version) {
		m.era, m.until = Era20260728, time.Time{}
		if was == Era2025 {
			return &session.EraChanged{From: era2025, To: era20260728, Why: session.EraDiscoverAnswered, Method: methodDiscover}
		}
		return nil
	}
	m.era = Era2025
	if !m.pinned && m.reprobe > 0 {
		m.until = now.Add(m.reprobe)
	}
	if was == Era2025 || discover == nil {
		return nil // no change, or a persisted 2025 session: nothing refused
	}
	from := "" // from EraAuto
	if was == Era20260728 {
		from = era20260728
	}
	c := eraChange(from, era2025, session.EraDiscoverRefused, *discover)
	if x := *discover; x.Status >= 200 && x.Status < 300 && !x.RPC.Present && !x.Malformed {
		c.Why = session.EraDiscoverUnsupported
	}
	return c
}

// dialFailed takes a failed handshake of the era dialed: a discover outage
// is counted, any other failure starts the count over; a learned 2025
// handshake refused with a [LegacyRefusal] ends the 2025 era, the change
// returned.
func (m *eraMemory) dialFailed(dialed Era, err error) *session.EraChanged {
	m.mu.Lock()
	defer m.mu.Unlock()
	if errors.Is(err, ErrDiscoverOutage) {
		m.outages++
		return nil
	}
	m.outages = 0
	he, ok := errors.AsType[*classify.HTTPError](err)
	if dialed != Era2025 || m.pinned || !ok || !LegacyRefusal(he.Exchange) {
		return nil
	}
	m.era, m.until = EraAuto, time.Time{}
	return eraChange(era2025, "", session.EraRefusedOpening, he.Exchange)
}

// refused takes a refusal of a session's era (served: it had been ready)
// and reports whether the session ends and the next discovers: one opening
// at once, one that served at most once per EraReprobe (negative: once);
// never under the host's Era2025.
func (m *eraMemory) refused(now time.Time, served bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pinned {
		return false
	}
	if served {
		if !m.liveShown.IsZero() && (m.reprobe < 0 || now.Sub(m.liveShown) < m.reprobe) {
			return false
		}
		m.liveShown = now
	}
	m.era, m.until, m.outages = EraAuto, time.Time{}, 0
	return true
}

func eraChange(from, to string, why session.EraReason, x Exchange) *session.EraChanged {
	c := &session.EraChanged{From: from, To: to, Why: why, Method: cmp.Or(x.Method, x.Verb), Status: x.Status}
	if x.RPC.Present {
		c.Code = x.RPC.Code
	}
	return c
}

package httpsession

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/msgcheck"
)

// DefaultEraReprobe is DialerOptions.EraReprobe's default: a fall back to the
// 2025 era lasts ten minutes of new sessions, then `server/discover` is
// tried again (one request per probe).
const DefaultEraReprobe = 10 * time.Minute

// maxDiscoverOutages is how many handshakes in a row may fail because their
// `server/discover` met an outage (DiscoverOutage: no answer, an
// answer stream lost before its response, 408, 429, a 5xx but 501) before
// the next one lets go-sdk fall back to `initialize`: a passing outage of a
// 2026-07-28 server is retried on the backoff, while a 2025-era server that
// answers the unknown method with a 5xx still connects.
const maxDiscoverOutages = 3

// eraMemory is the one owner of the era decision of a supervisor: which
// handshake a new session starts with, learned from the sessions opened
// (the negotiated version, and how `server/discover` was answered). Its
// rules (DESIGN.md section 7):
//   - the host's Era2025 is kept for good; any other 2025 era (learned
//     from a refused discover, a fallback, or a persisted 2025 session)
//     lasts DialerOptions.EraReprobe on the clock, then the next new
//     session sends `server/discover` again;
//   - a discover that met an outage is no verdict on the era: go-sdk's
//     fallback is refused (Config.FallbackAfterOutage unset) and the
//     handshake is retried, up to maxDiscoverOutages in a row;
//   - a session whose request is answered with a refusal of its era ends,
//     detached, and the next session discovers again (go-sdk's fallback to
//     `initialize` still open): a 2026-07-28 session's answered 400 -32022
//     (VersionRefusal: the server rolled back), a 2025 session's, or
//     a 2025 handshake's, answered with a recognized modern error
//     (LegacyRefusal: the fallback was wrong; not under the host's
//     Era2025). A session still opening (its handshake and first listing)
//     is one connect attempt: acted on at once, each attempt on the retry
//     schedule. A session that served: at most once per EraReprobe, so a
//     server refusing every call does not cost a session each;
//   - every change of era is a session.EraChanged fact.
//
// Safe for concurrent use: Dial and Attach run on any goroutine.
type eraMemory struct {
	pinned  bool          // the host's Era2025: never probed
	reprobe time.Duration // DialerOptions.EraReprobe; negative: a 2025 era is kept for good

	mu        sync.Mutex
	era       Era
	until     time.Time // when a learned 2025 era ends; zero: for good (or not 2025)
	outages   int       // handshakes in a row whose discover met an outage
	liveShown time.Time // the last live-session refusal acted on
}

// newEraMemory starts from the host's era hint; reprobe 0 means
// DefaultEraReprobe.
func newEraMemory(era Era, reprobe time.Duration) *eraMemory {
	if reprobe == 0 {
		reprobe = DefaultEraReprobe
	}
	return &eraMemory{era: era, pinned: era == Era2025, reprobe: reprobe}
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

// learn keeps the era of version, a session negotiated or persisted, at
// now; "" teaches nothing. It returns the event detail when the era
// changed ("" otherwise). discover is how the session's `server/discover`
// was answered, if it sent one.
func (m *eraMemory) learn(now time.Time, version string, discover *Exchange) string {
	if version == "" {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.outages = 0
	was := m.era
	if msgcheck.ModernVersion(version) {
		m.era, m.until = Era20260728, time.Time{}
		if was == Era2025 {
			return "2026-07-28: server/discover answered again after the 2025 fallback"
		}
		return ""
	}
	m.era = Era2025
	if !m.pinned && m.reprobe > 0 {
		m.until = now.Add(m.reprobe)
	}
	if was == Era2025 || discover == nil {
		return "" // no change, or a persisted 2025 session: nothing refused
	}
	why := discoverAnswer(*discover)
	if m.reprobe > 0 {
		return fmt.Sprintf("2025-11-25: %s; probed again after %s", why, m.reprobe)
	}
	return "2025-11-25: " + why
}

// dialFailed takes a handshake that failed, started in the era dialed. It
// counts one whose discover met an outage; any other failure (the fallback
// let through failed too: the server is down, not answering the method
// badly) starts the count over, so a long outage does not turn the next
// passing discover failure into a fallback. A 2025 handshake of a learned
// era that the server refused with a recognized modern error
// (LegacyRefusal) ends the 2025 era at once: it returns the event
// detail ("" when the era stays).
func (m *eraMemory) dialFailed(dialed Era, err error) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if errors.Is(err, ErrDiscoverOutage) {
		m.outages++
		return ""
	}
	m.outages = 0
	he, ok := errors.AsType[*classify.HTTPError](err)
	if dialed != Era2025 || m.pinned || !ok || !LegacyRefusal(he.Exchange) {
		return ""
	}
	m.era, m.until = EraAuto, time.Time{}
	return refusedDetail("2025-11-25", he.Exchange, false)
}

// refused takes, at now, a refusal of the era of a session (see
// eraMemory); served reports that the session had been ready. It reports
// whether the session ends and the next one discovers: a session still
// opening at once, one that served at most once per EraReprobe (a negative
// EraReprobe: once per supervisor); never under the host's Era2025.
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

// refusedDetail is the era-changed event's detail for the refusal x of
// version on a session; served: one that had been ready.
func refusedDetail(version string, x Exchange, served bool) string {
	on, why := "a new session", "the server rolled back"
	if served {
		on = "a live session"
	}
	if !msgcheck.ModernVersion(version) {
		why = "an error of a later era"
	}
	what := x.Method
	if what == "" {
		what = x.Verb // the standalone stream's GET
	}
	return fmt.Sprintf("%s refused on %s (%s, %s): %s; discovering again", version, on, answerOf(x), what, why)
}

// discoverAnswer says why a `server/discover` led to the 2025 era: refused
// (a status and JSON-RPC code), or answered with a result whose
// supportedVersions lack 2026-07-28 (go-sdk's stateful streamable handler).
func discoverAnswer(x Exchange) string {
	if x.Status >= 200 && x.Status < 300 && !x.RPC.Present && !x.Malformed {
		return fmt.Sprintf("server/discover answered (HTTP %d) without 2026-07-28 among its supportedVersions", x.Status)
	}
	return "server/discover refused (" + answerOf(x) + ")"
}

// answerOf names an answer in an event: its status and JSON-RPC code.
func answerOf(x Exchange) string {
	s := "no HTTP answer"
	if x.Status != 0 {
		s = fmt.Sprintf("HTTP %d", x.Status)
	}
	if x.RPC.Present {
		s += fmt.Sprintf(", JSON-RPC %d", x.RPC.Code)
	}
	return s
}

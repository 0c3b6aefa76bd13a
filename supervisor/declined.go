package supervisor

import (
	"strconv"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/httpsession"
)

// A server may decline a session's push stream: the first standalone GET
// (2025 era) or subscriptions/listen POST (2026-07-28) answered 405,
// another 4xx or a non-stream answer. The stream keeper then holds it for
// the session's life (httpsession.StreamAttempt.Declined), and no list_changed can
// reach the session: its catalog is polled (Config.CatalogPollInterval), as
// with the stream off.

// pushDeclinedSession is what a session whose push stream can be declined
// reports; wireSession is one.
type pushDeclinedSession interface{ PushDeclined() bool }

// pushDeclined reports whether the server declined sess's push stream.
func pushDeclined(sess session) bool {
	d, ok := sess.(pushDeclinedSession)
	return ok && d.PushDeclined()
}

// streamDeclined is the input of a declined push stream of generation gen;
// detail names the answer.
type streamDeclined struct {
	gen    uint64
	detail string
}

func (in streamDeclined) take(s *Supervisor) {
	if in.gen != s.loop.m.Generation() {
		return // an earlier session's: its successor asks again
	}
	s.emitEvent(events.Event{Kind: events.KindStreamDeclined, Generation: in.gen, Detail: in.detail})
	if s.loop.m.State() == Ready {
		s.armPoll(in.gen) // no list_changed can arrive on this session
	}
}

// declinedDetail names a declined attempt's answer: "HTTP 405 text/plain",
// "HTTP 200 application/json"; without a content type "HTTP 404".
func declinedDetail(a httpsession.StreamAttempt) string { return declinedText(a.Status, a.ContentType) }

// declinedText names an answer by its status and content type.
func declinedText(status int, contentType string) string {
	d := "HTTP " + strconv.Itoa(status)
	if contentType != "" {
		d += " " + contentType
	}
	return d
}

// PushDeclined reports whether the server declined the session's push
// stream.
func (w *wireSession) PushDeclined() bool { return w.ws.Transport().StreamDeclined() }

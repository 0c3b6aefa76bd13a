package httpsession

// A server may decline a session's push stream: the first standalone GET
// (2025 era) or subscriptions/listen POST (2026-07-28) answered 405,
// another 4xx or a non-stream answer. The stream keeper then holds it for
// the session's life ([StreamAttempt.Declined]), and no list_changed can
// reach the session: the session reports a session.StreamDeclined fact,
// and PushDeclined from then on, so that its catalog is polled, as with
// the stream off.

// PushDeclined reports whether the server declined the session's push
// stream. The supervisor asks it through an interface of its own.
func (s *httpSession) PushDeclined() bool { return s.ws.Transport().StreamDeclined() }

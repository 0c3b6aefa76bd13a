package httpsession

// The conn's state the external tests read.

// DiscoverExchange is the record of the server/discover s sent, if any.
func DiscoverExchange(s *Session) (Exchange, bool) {
	if x := s.c.discovered(); x != nil {
		return *x, true
	}
	return Exchange{}, false
}

// WireSessionID is the Mcp-Session-Id s's requests carry now.
func WireSessionID(s *Session) string { return s.c.SessionID() }

// MarkDetached makes s's conn send no DELETE and no notification, the
// session staying open.
func MarkDetached(s *Session) { s.c.detach() }

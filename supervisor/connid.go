package supervisor

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/mcpsup/mcpsup/events"
)

// newConnectionID returns our own id of one go-sdk client session, for its
// events (events.Event.Connection): "conn:" and 8 hex digits from
// crypto/rand. A sessionless session (a 2026-07-28 server, a 2025-era
// server without Mcp-Session-Id) has no session id to hash, and the hash
// of "" is one value for every such session, so the events of two of them
// could not be told apart; this id can. It is no secret and names nothing
// of the server's.
func newConnectionID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24)
	return "conn:" + hex.EncodeToString(b[:])
}

// eventSessionID is the session id an event carries: its hash, or "" for a
// sessionless session (never the hash of "").
func eventSessionID(id string) string {
	if id == "" {
		return ""
	}
	return events.HashSessionID(id)
}

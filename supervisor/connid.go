package supervisor

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/mcpsup/mcpsup/events"
)

// newConnectionID returns our own id of one go-sdk client session for its
// events (events.Event.Connection): "conn:" and 8 random hex digits, which
// tell sessionless sessions apart.
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

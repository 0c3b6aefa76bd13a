package session

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/probes"
)

// ClientRequests are a go-sdk ClientSession's Requests but Alive, embedded
// by both transports' sessions: the lists page by page ([probes.Lister]),
// the rest go-sdk's own methods (a transport's session defines its own
// Close).
type ClientRequests struct {
	probes.Lister
	clientSession
}

// clientSession puts go-sdk's methods one level below the Lister's, whose
// lists take a cursor.
type clientSession struct{ *mcp.ClientSession }

// NewClientRequests returns the requests of cs.
func NewClientRequests(cs *mcp.ClientSession) ClientRequests {
	return ClientRequests{Lister: probes.SessionLister(cs), clientSession: clientSession{cs}}
}

package httpsession

import (
	"net/http"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/httpsession/wirebody"
)

// readErrorBody reads a non-2xx body, at most MaxErrorBody bytes on the wire
// and decoded, into x: the snippet and, when the body was read whole, the
// JSON-RPC error it carries. resp's body is closed.
func (c *conn) readErrorBody(x *Exchange, resp *http.Response) []byte {
	b := wirebody.Read(resp, c.cfg.MaxErrorBody)
	x.Body = snippet(b.Data)
	x.Oversized = b.Over
	if b.Broken { // no complete answer came
		x.TransportErr = b.Err
	}
	if !b.Over && b.Err == nil {
		x.SetBodyRPC(b.Data)
	}
	return b.Data
}

// sessionGone reports the session-expiry signals of DESIGN.md section 3,
// as classify decides them ([classify.HTTPError.SessionGone]).
func sessionGone(x Exchange) bool { return (&classify.HTTPError{Exchange: x}).SessionGone() }

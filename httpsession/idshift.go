package httpsession

import (
	"math/rand/v2"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A request id "MUST NOT have been previously used by the requestor within
// the same session" (basic protocol, requests), but a resumed go-sdk session
// numbers from 1 again: on a resumed session every integer id goes out moved
// by a random shift in [minIDShift, maxIDShift), within 15 digits, which
// go-sdk's float64 holds exactly, and the answers' ids are moved back.
const (
	minIDShift = 1 << 32
	maxIDShift = 1 << 46
)

func newIDShift() int64 { return minIDShift + rand.Int64N(maxIDShift-minIDShift) }

// wireID is id moved by the session's shift when it is go-sdk's integer.
func (c *conn) wireID(id jsonrpc.ID) jsonrpc.ID {
	if n, ok := id.Raw().(int64); ok && c.shift != 0 {
		moved, _ := jsonrpc.MakeID(float64(n + c.shift))
		return moved
	}
	return id
}

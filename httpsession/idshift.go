package httpsession

import (
	"math/rand/v2"
)

// A resumed session is the server's session of before, but go-sdk's new
// ClientSession numbers its requests from 1 again, and a request id "MUST
// NOT have been previously used by the requestor within the same session"
// (MCP, basic protocol, requests). A reused id collides with a call the
// previous holder left running (go-sdk's server refuses it: -32600
// "duplicate in-flight request ID"), and a server or gateway that
// deduplicates by id would answer it with the old call's result. So on a
// resumed session the Transport moves every integer request id go-sdk
// sends by the session's shift, a random number in [minIDShift,
// maxIDShift), and moves the answers' ids back before go-sdk reads them.
// Two holders of one session overlap in ids only when their shifts fall
// within their request counts of each other. A fresh session's shift is 0:
// its ids go out as go-sdk makes them.
const (
	minIDShift = 1 << 32
	// maxIDShift keeps a shifted id within 15 digits: a float64 (which
	// go-sdk reads ids into, jsonrpc.MakeID) holds it exactly, and the
	// plain-integer path of [requestID] reads it.
	maxIDShift = 1 << 46
)

// shiftOf returns the session's id shift.
func (t *Transport) shiftOf() int64 { return t.idShift.Load() }

// newIDShift draws a resumed session's id shift.
func newIDShift() int64 { return minIDShift + rand.Int64N(maxIDShift-minIDShift) }

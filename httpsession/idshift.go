package httpsession

import (
	"math/rand/v2"
)

// A request id "MUST NOT have been previously used by the requestor within
// the same session" (basic protocol, requests), but a resumed go-sdk
// session numbers from 1 again: on a resumed session every integer id goes
// out moved by a random shift in [minIDShift, maxIDShift), and the
// answers' ids are moved back. A fresh session's shift is 0.
const (
	minIDShift = 1 << 32
	// maxIDShift keeps a shifted id within 15 digits, which go-sdk's
	// float64 holds exactly.
	maxIDShift = 1 << 46
)

// newIDShift draws a resumed session's id shift.
func newIDShift() int64 { return minIDShift + rand.Int64N(maxIDShift-minIDShift) }

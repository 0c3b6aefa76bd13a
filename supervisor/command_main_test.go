package supervisor

import (
	"testing"

	"github.com/mcpsup/mcpsup/internal/stdiotest"
)

// mainWithServer runs the tests with the stdio test server at hand
// (stdiotest.WithServer).
type mainWithServer struct{ m interface{ Run() int } }

func (w mainWithServer) Run() int { return stdiotest.WithServer(w.m).Run() }

func testServer(t testing.TB) string { return stdiotest.Server(t) }

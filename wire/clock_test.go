package wire_test

import (
	"time"

	"github.com/jonboulle/clockwork"
)

func newFixedClock(at time.Time) *clockwork.FakeClock { return clockwork.NewFakeClockAt(at) }

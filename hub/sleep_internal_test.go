package hub

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
)

// movedClock is a fake clock that another goroutine moves by the time the
// waiter reads it first and starts its timer.
type movedClock struct {
	*clockwork.FakeClock
	by time.Duration
}

func (m movedClock) NewTimer(d time.Duration) clockwork.Timer {
	m.Advance(m.by)
	return m.FakeClock.NewTimer(d)
}

// A clock moved past the wake-up time between sleepUntil's read of it and
// its timer's start ends the wait at once; a relative timer alone would wait
// its whole duration again from the moved time, which no one moves.
func TestSleepUntilSeesAClockMovedBeforeItsTimer(t *testing.T) {
	fake := clockwork.NewFakeClock()
	clock := movedClock{FakeClock: fake, by: 2 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.True(t, sleepUntil(ctx, clock, fake.Now().Add(time.Second)), "woke without waiting for the context")
	require.NoError(t, ctx.Err())

	// Not yet due after the move: it waits for the clock.
	clock.by = 0
	woke := make(chan bool, 1)
	until := fake.Now().Add(time.Second)
	go func() { woke <- sleepUntil(ctx, clock, until) }()
	require.NoError(t, fake.BlockUntilContext(ctx, 1))
	fake.Advance(time.Second)
	require.True(t, <-woke)
}

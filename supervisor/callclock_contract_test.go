package supervisor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
)

// A call's clock keeps the context contract for what derives from it: a
// timeout reaches derived contexts (WithCancel, WithCancelCause,
// WithTimeout, context.AfterFunc) as context.DeadlineExceeded, its cause
// too; a cancelable parent's cause reaches them through the clock; stop
// reports whether it kept f from running, and f runs once, off the
// goroutine that ended the clock.
func TestCallClockKeepsTheContextContract(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		fake := clockwork.NewFakeClock()
		c := newCallClock(context.Background(), fake, time.Minute, time.Hour)
		defer c.release()
		child, cancel := context.WithCancel(c)
		defer cancel()
		causeChild, cancelCause := context.WithCancelCause(c)
		defer cancelCause(nil)
		timed, cancelTimed := context.WithTimeout(c, time.Hour)
		defer cancelTimed()
		ran := make(chan struct{}, 2)
		stopRun := context.AfterFunc(c, func() { ran <- struct{}{} })
		stopped := context.AfterFunc(c, func() { ran <- struct{}{} })
		require.True(t, stopped(), "stopped before the end: f kept from running")
		require.False(t, stopped(), "a second stop keeps nothing")

		fake.Advance(time.Minute)
		for _, ctx := range []context.Context{c, child, causeChild, timed} {
			<-ctx.Done()
			require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
			require.ErrorIs(t, context.Cause(ctx), context.DeadlineExceeded)
		}
		<-ran
		require.False(t, stopRun(), "f was started: stop keeps nothing")
		select {
		case <-ran:
			t.Fatal("a stopped f ran")
		default:
		}
	})
	t.Run("parent's cause", func(t *testing.T) {
		parent, cancelParent := context.WithCancelCause(context.Background())
		c := newCallClock(parent, clockwork.NewFakeClock(), time.Minute, time.Hour)
		defer c.release()
		child, cancel := context.WithCancel(c)
		defer cancel()
		why := errors.New("host shut down")
		cancelParent(why)
		<-child.Done()
		require.ErrorIs(t, child.Err(), context.Canceled)
		require.ErrorIs(t, context.Cause(child), why)
	})
	t.Run("f off the ending goroutine", func(t *testing.T) {
		c := newCallClock(context.Background(), clockwork.NewFakeClock(), time.Minute, time.Hour)
		var mu sync.Mutex
		done := make(chan struct{})
		c.AfterFunc(func() { mu.Lock(); defer mu.Unlock(); close(done) })
		mu.Lock()
		c.cancel() // f would deadlock here if it ran on this goroutine
		mu.Unlock()
		<-done
		c.release()
	})
}

// stop and the clock's end racing: f runs exactly when stop says it was
// not kept from running.
func TestCallClockStopRacingEnd(t *testing.T) {
	for range 200 {
		c := newCallClock(context.Background(), clockwork.NewFakeClock(), time.Minute, time.Hour)
		const n = 8
		var ran atomic.Int32
		var wg sync.WaitGroup
		stops := make([]func() bool, n)
		for i := range stops {
			wg.Add(1)
			stops[i] = c.AfterFunc(func() { ran.Add(1); wg.Done() })
		}
		kept := make(chan int32, n)
		var sw sync.WaitGroup
		for _, stop := range stops {
			sw.Go(func() {
				if stop() {
					kept <- 1
					wg.Done()
				}
			})
		}
		c.cancel()
		sw.Wait()
		wg.Wait()
		close(kept)
		var k int32
		for v := range kept {
			k += v
		}
		require.Equal(t, int32(n), ran.Load()+k, "every f either ran or was stopped, never both")
		c.release()
	}
}

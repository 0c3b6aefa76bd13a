package supervisor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A released session ends its calls in flight and those that join it
// later, and only its own; Close ends every call.
func TestInflightEndsCallsOfReleasedSessionsAndOnClose(t *testing.T) {
	var f inflight
	a, b := &held{gen: 1}, &held{gen: 2}
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	idA, idB := f.join(a, cancelFunc(cancelA)), f.join(b, cancelFunc(cancelB))
	require.NotZero(t, idA)
	require.NotZero(t, idB)

	f.release(a)
	require.Error(t, ctxA.Err(), "the released session's call ended")
	require.NoError(t, ctxB.Err(), "the other session's call runs on")
	late, cancelLate := context.WithCancel(context.Background())
	require.Zero(t, f.join(a, cancelFunc(cancelLate)))
	require.Error(t, late.Err(), "a call joining a released session ends at once")

	f.leave(idB)
	ctxC, cancelC := context.WithCancel(context.Background())
	f.join(b, cancelFunc(cancelC))
	f.close()
	require.Error(t, ctxC.Err(), "Close ended the call in flight")
	require.NoError(t, ctxB.Err(), "a call that left is not ended")
	afterClose, cancelAfter := context.WithCancel(context.Background())
	require.Zero(t, f.join(b, cancelFunc(cancelAfter)))
	require.Error(t, afterClose.Err())
	cancelB()
}

// Registering a call allocates nothing once the slice has room.
func TestInflightJoinAllocatesNothing(t *testing.T) {
	var f inflight
	h := &held{}
	cancel := func() {}
	f.leave(f.join(h, cancelFunc(cancel)))
	require.Zero(t, testing.AllocsPerRun(100, func() { f.leave(f.join(h, cancelFunc(cancel))) }))
}

// Once a burst of calls is over, the table keeps no slice larger than
// maxKeptFlights; a small one is kept for the next calls.
func TestInflightDropsTheSliceOfABurst(t *testing.T) {
	var f inflight
	h := &held{}
	cancel := func() {}
	f.leave(f.join(h, cancelFunc(cancel)))
	require.NotNil(t, f.calls, "a small slice is kept")
	ids := make([]uint64, 0, 4*maxKeptFlights)
	for range 4 * maxKeptFlights {
		ids = append(ids, f.join(h, cancelFunc(cancel)))
	}
	require.Greater(t, cap(f.calls), maxKeptFlights)
	for _, id := range ids {
		f.leave(id)
	}
	require.Empty(t, f.calls)
	require.Nil(t, f.calls, "the burst's slice is dropped")
}

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
	idA, idB := f.join(a, cancelA), f.join(b, cancelB)
	require.NotZero(t, idA)
	require.NotZero(t, idB)

	f.release(a)
	require.Error(t, ctxA.Err(), "the released session's call ended")
	require.NoError(t, ctxB.Err(), "the other session's call runs on")
	late, cancelLate := context.WithCancel(context.Background())
	require.Zero(t, f.join(a, cancelLate))
	require.Error(t, late.Err(), "a call joining a released session ends at once")

	f.leave(idB)
	ctxC, cancelC := context.WithCancel(context.Background())
	f.join(b, cancelC)
	f.close()
	require.Error(t, ctxC.Err(), "Close ended the call in flight")
	require.NoError(t, ctxB.Err(), "a call that left is not ended")
	afterClose, cancelAfter := context.WithCancel(context.Background())
	require.Zero(t, f.join(b, cancelAfter))
	require.Error(t, afterClose.Err())
	cancelB()
}

// Registering a call allocates nothing once the slice has room.
func TestInflightJoinAllocatesNothing(t *testing.T) {
	var f inflight
	h := &held{}
	cancel := func() {}
	f.leave(f.join(h, cancel))
	require.Zero(t, testing.AllocsPerRun(100, func() { f.leave(f.join(h, cancel)) }))
}

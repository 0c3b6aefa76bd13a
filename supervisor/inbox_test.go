package supervisor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// named is an input that records its name when taken.
type named string

func (named) take(*Supervisor) {}

// drain is a loop over b: it takes every input, in order, into took.
func drain(b *inbox, took *[]named) func() {
	return func() {
		for {
			in, ok := b.next()
			if !ok {
				return
			}
			*took = append(*took, in.(named))
		}
	}
}

// A command's result posted with pushLast is taken on the command's own
// goroutine when no loop runs: taken before pushLast returns. One posted
// while a loop runs is left to that loop; push always starts a goroutine.
func TestInboxPushLastRunsTheLoopOnItsCaller(t *testing.T) {
	b := newInbox()
	b.start()
	var took []named
	run := drain(b, &took)

	require.True(t, b.pushLast(named("dialed"), run))
	require.Equal(t, []named{"dialed"}, took, "taken on the caller, before pushLast returned")

	// While a loop runs (here: this goroutine, inside run), a pushLast
	// only queues: the running loop takes it next.
	var nested []named
	inner := func() {
		for {
			in, ok := b.next()
			if !ok {
				return
			}
			nested = append(nested, in.(named))
			if in == named("first") {
				require.True(t, b.pushLast(named("second"), func() { t.Error("a second loop ran while one ran") }))
				require.Equal(t, []named{"first"}, nested, "queued, not taken inside pushLast")
			}
		}
	}
	require.True(t, b.pushLast(named("first"), inner))
	require.Equal(t, []named{"first", "second"}, nested)

	// push hands the input to a new loop goroutine; end waits for it.
	started := make(chan struct{})
	release := make(chan struct{})
	var pushed []named
	require.True(t, b.push(named("closed"), func() {
		close(started)
		<-release
		drain(b, &pushed)()
	}))
	<-started
	require.Empty(t, pushed, "push returned before its loop took the input")
	close(release)
	b.end()
	require.Equal(t, []named{"closed"}, pushed)
	require.False(t, b.pushLast(named("late"), run), "an ended inbox refuses")
}

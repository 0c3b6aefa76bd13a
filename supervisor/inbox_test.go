package supervisor

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// step is an input that runs its function when the loop takes it.
type step func(s *Supervisor)

func (f step) take(s *Supervisor) { f(s) }

func loopOnly() *Supervisor {
	s := &Supervisor{inbox: newInbox(), sink: newSinkQueue(nil, nil, "")}
	s.inbox.start()
	return s
}

// A command's result is taken on the command's goroutine when no loop runs,
// and the command that loop issues runs next on the same goroutine: the
// whole chain (dial, its result, discovery, its result) is done when the
// first command's runCommands returns, with no goroutine started.
func TestCommandsAndTheirResultsRunOnOneGoroutine(t *testing.T) {
	s := loopOnly()
	var did []string
	discover := func() input {
		did = append(did, "discover")
		return step(func(*Supervisor) { did = append(did, "discovered") })
	}
	dial := func() input {
		did = append(did, "dial")
		return step(func(s *Supervisor) {
			did = append(did, "dialed")
			s.goCmd(discover)
		})
	}
	s.cmds.Add(1) // as goCmd does
	s.runCommands(dial)
	require.Equal(t, []string{"dial", "dialed", "discover", "discovered"}, did)
	s.cmds.Wait() // every command counted out
	require.False(t, s.inbox.running)
}

// A command handed to the loop does not wait for inputs queued behind the
// step that issued it: it starts at once on a goroutine of its own.
func TestHandedCommandDoesNotWaitForQueuedInputs(t *testing.T) {
	s := loopOnly()
	ran := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	first := step(func(s *Supervisor) {
		s.post(step(func(*Supervisor) {
			// The loop is still running (this input was queued): the
			// command must have started without it.
			select {
			case <-ran:
			case <-time.After(time.Minute):
				t.Error("the handed command waited for the loop to end")
			}
			wg.Done()
		}))
		s.goCmd(func() input { close(ran); return nil })
	})
	require.True(t, s.post(first))
	wg.Wait()
	s.inbox.end()
	s.cmds.Wait()
}

// handOff takes one command while a loop runs; next returns it once.
func TestInboxHandsOffOneCommandToTheRunningLoop(t *testing.T) {
	b := newInbox()
	cmd := func() input { return nil }
	require.False(t, b.handOff(cmd), "no loop runs")
	_, start := b.push(step(nil))
	require.False(t, start, "refused before start")
	b.start()
	taken, start := b.push(step(nil))
	require.True(t, taken)
	require.True(t, start, "no loop ran: the caller runs one")
	_, start = b.push(step(nil))
	require.False(t, start, "a loop runs")
	require.True(t, b.handOff(cmd))
	require.False(t, b.handOff(cmd), "one is handed already")
	_, got, ok := b.next()
	require.True(t, ok)
	require.NotNil(t, got, "inputs wait: the command is returned to start at once")
	_, got, ok = b.next()
	require.True(t, ok)
	require.Nil(t, got, "returned once")
	require.True(t, b.handOff(cmd))
	_, got, ok = b.next()
	require.False(t, ok, "the queue is empty: the loop ends")
	require.NotNil(t, got, "to run after the loop")
	require.False(t, b.running)
	b.end()
	taken, _ = b.push(step(nil))
	require.False(t, taken, "refused after end")
}

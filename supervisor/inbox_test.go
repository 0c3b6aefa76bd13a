package supervisor

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// step is an input that runs its function when the loop takes it.
type step = input

func loopOnly() *Supervisor {
	s := &Supervisor{sink: newSinkQueue(nil, nil, "")}
	s.inbox = newInbox(s)
	s.inbox.start()
	return s
}

// A command does not wait for inputs queued behind the step that issued
// it: it starts at once on a goroutine of its own.
func TestHandedCommandDoesNotWaitForQueuedInputs(t *testing.T) {
	s := loopOnly()
	ran := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	first := step(func(s *Supervisor) {
		s.post(step(func(*Supervisor) {
			// The loop is still running (this input was queued): the
			// command must have started without it, or this waits forever
			// (the test binary's -timeout names it).
			<-ran
			wg.Done()
		}))
		s.cmds.Go(func() { close(ran) })
	})
	require.True(t, s.post(first))
	wg.Wait()
	s.inbox.wait(true)
	s.cmds.Wait()
}

// post never runs the loop on its caller's goroutine: an input that waits
// for its poster does not block the post (a host's Start, CallTool, Close
// or Reconnect, or a timer's callback).
func TestPostNeverRunsTheLoopOnItsCaller(t *testing.T) {
	s := loopOnly()
	release, taken := make(chan struct{}), make(chan struct{})
	require.True(t, s.post(step(func(*Supervisor) { <-release; close(taken) })))
	close(release) // reached only because post returned
	<-taken
	s.inbox.wait(true)
}

// Every command runs exactly once and is counted out once, whether its
// result starts a loop or joins a running one.
func TestEveryCommandRunsOnceCountedOnce(t *testing.T) {
	s := loopOnly()
	const fan, depth = 3, 4
	var mu sync.Mutex
	runs := map[[2]int]int{}
	var all sync.WaitGroup // one per command the chain issues
	all.Add(fan * (depth + 1))
	var issue func(s *Supervisor, id, level int)
	issue = func(s *Supervisor, id, level int) {
		s.cmds.Go(func() {
			mu.Lock()
			runs[[2]int{id, level}]++
			mu.Unlock()
			all.Done()
			if level < depth {
				s.post(step(func(s *Supervisor) { issue(s, id, level+1) }))
			}
		})
	}
	require.True(t, s.post(step(func(s *Supervisor) {
		for id := range fan {
			issue(s, id, 0)
		}
	})))
	all.Wait()
	// As the stop does: the loop ends first, then the commands are waited
	// for (s.cmds panics if one is counted out twice, hangs if never).
	s.inbox.wait(true)
	s.cmds.Wait()
	require.Len(t, runs, fan*(depth+1))
	for k, n := range runs {
		require.Equal(t, 1, n, "command %v", k)
	}
}

// A command may wait for the loop (post and wait) without deadlock, and the
// stop (inbox.wait) waits for the loop alone, not for the command.
func TestHandedCommandRunsAfterTheLoop(t *testing.T) {
	s := loopOnly()
	took, release, result := make(chan struct{}), make(chan struct{}), make(chan struct{})
	require.True(t, s.post(step(func(s *Supervisor) {
		s.cmds.Go(func() {
			if s.post(step(func(*Supervisor) { close(took) })) {
				<-took // a new loop takes it: the one that issued this ended
			}
			<-release
			s.post(step(func(*Supervisor) { close(result) }))
		})
	})))
	<-took
	s.inbox.wait(true) // returns while the command waits
	close(release)
	s.cmds.Wait()
	select {
	case <-result:
		t.Fatal("a result posted after the end was taken")
	default:
	}
}

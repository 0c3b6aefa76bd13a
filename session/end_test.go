package session_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/session"
)

// The first cause wins, as yamux's one exitErr: a session that ended
// because the server said it is gone stays ended for that reason, whatever
// ends it later (a Close, a failed keepalive).
func TestEndFirstCauseWins(t *testing.T) {
	var e session.End
	select {
	case <-e.Done():
		t.Fatal("done before any Fail")
	default:
	}
	require.NoError(t, e.Err())

	gone := errors.New("404: session gone")
	var wg sync.WaitGroup
	firsts := make(chan bool, 9)
	firsts <- e.Fail(gone)
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); firsts <- e.Fail(session.ErrClosed) }()
	}
	wg.Wait()
	close(firsts)
	n := 0
	for f := range firsts {
		if f {
			n++
		}
	}
	assert.Equal(t, 1, n, "exactly one Fail ends the session")
	<-e.Done()
	assert.Same(t, gone, e.Err())
	assert.True(t, e.Ended())
}

// A nil cause is a Close: the end is never nil once Done is closed.
func TestEndNilCauseIsClosed(t *testing.T) {
	var e session.End
	require.True(t, e.Fail(nil))
	assert.ErrorIs(t, e.Err(), session.ErrClosed)
}

// AfterEnd lets a watcher hear a session's end without a goroutine of its
// own: f runs once, after Done is closed, on the goroutine whose Fail
// ended the session (a later Fail runs nothing), and at once when the
// session has ended already.
func TestAfterEndRunsOnceAfterDone(t *testing.T) {
	var e session.End
	var ran []string
	e.AfterEnd(func() {
		select {
		case <-e.Done():
		default:
			t.Error("ran before Done was closed")
		}
		ran = append(ran, "registered before")
	})
	assert.Empty(t, ran, "nothing runs before the end")
	require.True(t, e.Fail(errors.New("gone")))
	assert.Equal(t, []string{"registered before"}, ran)
	require.False(t, e.Fail(session.ErrClosed))
	assert.Equal(t, []string{"registered before"}, ran, "a later Fail runs nothing again")
	e.AfterEnd(func() { ran = append(ran, "registered after") })
	assert.Equal(t, []string{"registered before", "registered after"}, ran, "runs at once after the end")
}

package session

import "sync"

// End records a session's end: the first Fail wins, later ones are
// dropped. The zero value is ready; safe for concurrent use.
type End struct {
	mu   sync.Mutex
	done chan struct{}
	err  error
}

// Fail ends the session with err (nil counts as ErrClosed) and reports
// whether this call ended it.
func (e *End) Fail(err error) bool {
	if err == nil {
		err = ErrClosed
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.init()
	if e.err != nil {
		return false
	}
	e.err = err
	close(e.done)
	return true
}

// Done is closed once Fail was called.
func (e *End) Done() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.init()
	return e.done
}

// Err is nil before the end, then the first Fail's error.
func (e *End) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// Ended reports whether Fail was called.
func (e *End) Ended() bool { return e.Err() != nil }

func (e *End) init() {
	if e.done == nil {
		e.done = make(chan struct{})
	}
}

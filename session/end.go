package session

import "sync"

// End records a session's end: the first Fail wins, later ones are
// dropped. The zero value is ready; safe for concurrent use.
type End struct {
	mu    sync.Mutex
	done  chan struct{}
	err   error
	after []func() // AfterEnd's, run once by the Fail that ends
}

// Fail ends the session with err (nil counts as ErrClosed) and reports
// whether this call ended it.
func (e *End) Fail(err error) bool {
	if err == nil {
		err = ErrClosed
	}
	e.mu.Lock()
	e.init()
	if e.err != nil {
		e.mu.Unlock()
		return false
	}
	e.err = err
	close(e.done)
	after := e.after
	e.after = nil
	e.mu.Unlock()
	for _, f := range after {
		f()
	}
	return true
}

// AfterEnd runs f once the session has ended: on the goroutine whose Fail
// ended it, after Done is closed, or at once when it has. f must not block.
func (e *End) AfterEnd(f func()) {
	e.mu.Lock()
	if e.err == nil {
		e.after = append(e.after, f)
		e.mu.Unlock()
		return
	}
	e.mu.Unlock()
	f()
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

// Status is Live with Done until Fail, then Ended with a nil channel:
// nothing changes after ([Session.Status]).
func (e *End) Status() (Status, <-chan struct{}) {
	if e.Ended() {
		return Ended, nil
	}
	return Live, e.Done()
}

func (e *End) init() {
	if e.done == nil {
		e.done = make(chan struct{})
	}
}

package httpsession

import (
	"sync"
	"time"
)

// drains bounds how long a Transport's answer streams drain on Close (see
// [answerStream.Close]) with one timer for all of them: armed by a drain
// that finds it idle, it cuts, when it fires, every drain older than
// drainWait, and is armed again for the next one while any is left. A drain
// is thus cut between drainWait and twice that after it began. Calls in a
// row then start and stop no timer each: a timer started per call cost its
// start and stop and, about one call in five, a wakeup of the runtime's
// network poller (a write and a read of its event fd).
//
// The real clock: the bound limits how long a server holds a connection
// and decides nothing, so an injected test clock must not see a waiter.
// Once the Transport's session is closed ([drains.close]), no stream
// drains: a server holding its streams open keeps no reader of go-sdk's
// and no connection past Close. The zero value is ready; safe for
// concurrent use.
type drains struct {
	wait   time.Duration // 0: drainWait (tests set it shorter)
	mu     sync.Mutex
	timer  *time.Timer     // nil while no drain is watched
	active []*answerStream // the drains under way, each knowing its index
	closed bool            // the session is closed: nothing drains
}

// start watches s's drain from now on; false, watching nothing, once the
// session is closed: s is not to be drained.
func (d *drains) start(s *answerStream) bool {
	s.drainStart = time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	s.drainAt = len(d.active)
	d.active = append(d.active, s)
	if d.timer == nil {
		d.timer = time.AfterFunc(d.bound(), d.cut)
	}
	return true
}

// close cuts every drain under way, stops the timer and refuses the drains
// to come: the session is closed.
func (d *drains) close() {
	d.mu.Lock()
	d.closed = true
	due := d.active
	d.active = nil
	for _, s := range due {
		s.drainAt = -1
	}
	if d.timer != nil {
		d.timer.Stop() // a cut already running finds nothing and drops it
		d.timer = nil
	}
	d.mu.Unlock()
	for _, s := range due {
		s.closeBody()
	}
}

func (d *drains) bound() time.Duration {
	if d.wait > 0 {
		return d.wait
	}
	return drainWait
}

// stop ends the watch of s's drain, if the timer did not cut it.
func (d *drains) stop(s *answerStream) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s.drainAt >= 0 {
		d.remove(s)
	}
}

// remove takes s out of active; d.mu is held.
func (d *drains) remove(s *answerStream) {
	last := len(d.active) - 1
	moved := d.active[last]
	d.active[s.drainAt], moved.drainAt = moved, s.drainAt
	d.active[last] = nil
	d.active = d.active[:last]
	s.drainAt = -1
}

// cut closes the server's body of every drain older than drainWait, which
// ends its read, and arms the timer again for the oldest left.
func (d *drains) cut() {
	now, wait := time.Now(), d.bound()
	var due []*answerStream
	d.mu.Lock()
	next := wait
	for i := 0; i < len(d.active); {
		s := d.active[i]
		if age := now.Sub(s.drainStart); age < wait {
			next = min(next, wait-age)
			i++
			continue
		}
		d.remove(s)
		due = append(due, s)
	}
	if len(d.active) > 0 {
		d.timer.Reset(next)
	} else {
		d.timer = nil
	}
	d.mu.Unlock()
	for _, s := range due {
		s.closeBody()
	}
}

package supervisor

import (
	"log/slog"
	"reflect"
	"runtime"

	"github.com/mcpsup/mcpsup/events"
)

// sinkQueue hands events to the host's sink, in order, one at a time, off
// the loop goroutine (DESIGN.md section 5).
type sinkQueue struct {
	*serial[events.Event]
	sink   events.Sink
	logger *slog.Logger
	server string
}

func newSinkQueue(sink events.Sink, logger *slog.Logger, server string) *sinkQueue {
	q := &sinkQueue{sink: sink, logger: logger, server: server}
	q.serial = newSerial(q.deliver, true)
	return q
}

// deliver hands e to the sink, the only caller of a sink (inSink); a panic
// is logged and the event dropped.
//
//go:noinline
func (q *sinkQueue) deliver(e events.Event) {
	defer func() {
		if r := recover(); r != nil {
			q.logger.Error("mcpsup: the events sink panicked; event dropped", "server", q.server, "kind", e.Kind, "seq", e.Seq, "panic", r)
		}
	}()
	q.sink.Emit(e)
}

var deliverName = runtime.FuncForPC(reflect.ValueOf((*sinkQueue).deliver).Pointer()).Name()

// inSink reports whether sinkQueue.deliver is on the caller's stack: Close
// and Detach, which wait for the sink, must not wait for themselves.
func inSink() bool {
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(2, pcs)
		frames := runtime.CallersFrames(pcs[:n])
		for {
			f, more := frames.Next()
			if f.Function == deliverName {
				return true
			}
			if !more {
				break
			}
		}
		if n < len(pcs) {
			return false
		}
		pcs = make([]uintptr, 2*len(pcs)) // a deep stack: look at all of it
	}
}

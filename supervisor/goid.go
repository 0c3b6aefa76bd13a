package supervisor

import (
	"bytes"
	"runtime"
	"strconv"
)

// goid returns the id of the calling goroutine, read from its stack header
// ("goroutine 42 [running]:"). It lets Close, Detach and a failed call tell
// whether they run on the loop goroutine, inside an events sink, where
// waiting for the loop would wait forever.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// onLoop reports whether the caller runs on the loop goroutine.
func (s *Supervisor) onLoop() bool {
	id := s.loopID.Load()
	return id != 0 && id == goid()
}

package supervisor

// FlushEvents returns once every event of what the supervisor took before
// the call has reached Config.Observe.Events: the loop took every input posted
// before (a call's report to the machine included), and the sink received
// their events. Tests outside the package read a recorder after it, so a
// count or an absence they assert is not read before its events arrive.
//
// It waits for the sink queue to be idle, not for its goroutine to end
// (sinkQueue.drain, which Close calls once the loop ended): the loop may
// push again meanwhile, and a WaitGroup's Wait must not race its Add.
func FlushEvents(s *Supervisor) {
	done := make(chan struct{})
	if s.post(settled(done)) { // taken: the stop takes what was posted
		<-done
	}
	q := s.sink
	q.mu.Lock()
	for q.running {
		q.idle.Wait()
	}
	q.mu.Unlock()
}

// SetJitter makes s draw the ttl re-lists' jitter from f; called before
// Start.
func SetJitter(s *Supervisor, f func() float64) { s.jitter = f }

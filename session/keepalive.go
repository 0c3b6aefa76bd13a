package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/mcpsup/mcpsup/classify"
)

// maxPingTimeouts is how many keepalive pings in a row may go unanswered
// within the interval before the session counts as dead.
const maxPingTimeouts = 2

// pingOutcome is what the keepalive does after one ping.
type pingOutcome uint8

const (
	pingKeep pingOutcome = iota // the session lives: ping again
	pingDead                    // the session is dead: end it, without DELETE
	pingStop                    // stop pinging, the session lives
)

// judgePing applies the keepalive rule to one failed ping's verdict,
// timeouts counting the unanswered pings in a row: as on a call (DESIGN.md
// section 3, "reconnect from ready?"), only transport and session-expired
// mean the session is gone, and maxPingTimeouts timeouts in a row; a server
// without ping (-32601, Method not found) is not pinged again.
func judgePing(v classify.Verdict, timeouts int) pingOutcome {
	switch v.Class {
	case classify.Transport, classify.SessionExpired:
		return pingDead
	case classify.Timeout:
		if timeouts >= maxPingTimeouts {
			return pingDead
		}
	case classify.MethodNotFound, classify.Canceled:
		return pingStop
	}
	return pingKeep
}

// KeepAlive pings one session every interval on the supervisor's clock, each
// ping bounded by the interval. Not go-sdk's ClientOptions.KeepAlive, which
// closes the session with DELETE on any failed ping, a 401 included
// (mcp/shared.go): a dead ping ([judgePing]) ends it through end, without
// DELETE, and its error is the session's end.
type KeepAlive struct {
	stop context.CancelFunc // ends the pinging; the ping in flight is canceled
	done chan struct{}

	mu    sync.Mutex
	cause error // the failed ping that ended the session
}

// StartKeepAlive starts pinging every interval until stop or a dead ping.
func StartKeepAlive(clock clockwork.Clock, every time.Duration, log *slog.Logger, ping func(context.Context) error, end func()) *KeepAlive {
	life, stop := context.WithCancel(context.Background())
	k := &KeepAlive{stop: stop, done: make(chan struct{})}
	go k.run(life, clock, every, log, ping, end)
	return k
}

func (k *KeepAlive) run(life context.Context, clock clockwork.Clock, every time.Duration, log *slog.Logger, ping func(context.Context) error, end func()) {
	defer close(k.done)
	tick := clock.NewTicker(every)
	defer tick.Stop()
	timeouts := 0
	for {
		select {
		case <-life.Done():
			return
		case <-tick.Chan():
		}
		timedOut, err := bounded(life, clock, every, ping)
		if life.Err() != nil {
			return
		}
		if err == nil {
			timeouts = 0
			continue
		}
		v := classify.Error(err)
		if timedOut {
			timeouts++
			v = classify.Verdict{Class: classify.Timeout, Detail: err.Error()}
			err = fmt.Errorf("mcpsup: keepalive: %d pings in a row got no answer within %s: %w", timeouts, every, context.DeadlineExceeded)
		} else {
			timeouts = 0
		}
		switch judgePing(v, timeouts) {
		case pingDead:
			log.Debug("mcpsup: keepalive ping: the session is dead", "verdict", v.String())
			k.mu.Lock()
			k.cause = fmt.Errorf("mcpsup: keepalive ping: %w", err)
			k.mu.Unlock()
			end()
			return
		case pingStop:
			log.Debug("mcpsup: keepalive ping not served; pinging stops", "verdict", v.String())
			return
		default:
			log.Debug("mcpsup: keepalive ping failed; the session is kept", "verdict", v.String())
		}
	}
}

// bounded runs f with a context of parent canceled after d on clock; cut
// reports that the bound ended f (an answer just before it is the answer).
func bounded(parent context.Context, clock clockwork.Clock, d time.Duration, f func(context.Context) error) (cut bool, err error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var mu sync.Mutex
	timedOut := false
	t := clock.AfterFunc(d, func() {
		mu.Lock()
		timedOut = true
		mu.Unlock()
		cancel()
	})
	err = f(ctx)
	t.Stop()
	mu.Lock()
	defer mu.Unlock()
	return timedOut && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)), err
}

// Stop ends the pinging and waits for it. It is idempotent and nil-safe.
func (k *KeepAlive) Stop() {
	if k == nil {
		return
	}
	k.stop()
	<-k.done
}

// EndedBy returns the failed ping that ended the session, nil if none did.
// It is nil-safe.
func (k *KeepAlive) EndedBy() error {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cause
}

// PingProvesDead reports whether a failed liveness request with verdict v,
// given its full time, proves the session dead ([judgePing]).
func PingProvesDead(v classify.Verdict) bool { return judgePing(v, maxPingTimeouts) == pingDead }

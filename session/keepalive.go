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

// judgePing applies the keepalive rule to the verdict of one failed ping,
// timeouts being the count of unanswered pings in a row, this one included
// when it timed out. The rule follows DESIGN.md section 3 ("reconnect from
// ready?"): only transport (no HTTP answer: refused, reset, EOF) and
// session-expired (404 to a request with Mcp-Session-Id, the null-id
// -32000 4xx) mean the session is gone; every other class keeps it, as it
// would keep it on a call: unauthorized (a credential that expired; the
// next call tells the host), rate-limited, server-error, forbidden,
// application, protocol and unknown. A server without ping
// (method-not-found, JSON-RPC -32601) is not pinged again. A ping that got
// no answer within the interval (timeout) is tolerated once; maxPingTimeouts
// in a row mean the connection answers nothing, and the session is dead.
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

// KeepAlive pings one session every interval on the supervisor's clock, in
// place of go-sdk's ClientOptions.KeepAlive, which closes the session, and
// sends DELETE, on any failed ping (mcp/shared.go StartKeepAlive), a 401
// included. A ping found dead by [judgePing] ends the session without
// DELETE through end (the server forgot the session or cannot be reached;
// a DELETE could only fail or destroy a session a later resume could use);
// the session's Wait then returns the ping's error, which the supervisor
// takes as "the session died". Each ping is bounded by the interval.
type KeepAlive struct {
	clock clockwork.Clock
	every time.Duration
	ping  func(context.Context) error
	end   func() // ends the session without DELETE
	log   *slog.Logger

	life     context.Context // ends on stop: the ping in flight is canceled
	stopLife context.CancelFunc
	done     chan struct{}

	mu    sync.Mutex
	cause error // the failed ping that ended the session
}

// StartKeepAlive starts pinging every interval until stop or a dead ping.
func StartKeepAlive(clock clockwork.Clock, every time.Duration, log *slog.Logger, ping func(context.Context) error, end func()) *KeepAlive {
	k := &KeepAlive{clock: clock, every: every, ping: ping, end: end, log: log, done: make(chan struct{})}
	k.life, k.stopLife = context.WithCancel(context.Background())
	go k.run()
	return k
}

func (k *KeepAlive) run() {
	defer close(k.done)
	tick := k.clock.NewTicker(k.every)
	defer tick.Stop()
	timeouts := 0
	for {
		select {
		case <-k.life.Done():
			return
		case <-tick.Chan():
		}
		timedOut, err := k.pingOnce()
		if k.life.Err() != nil {
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
			err = fmt.Errorf("mcpsup: keepalive: %d pings in a row got no answer within %s: %w", timeouts, k.every, context.DeadlineExceeded)
		} else {
			timeouts = 0
		}
		switch judgePing(v, timeouts) {
		case pingDead:
			k.log.Debug("mcpsup: keepalive ping: the session is dead", "verdict", v.String())
			k.mu.Lock()
			k.cause = fmt.Errorf("mcpsup: keepalive ping: %w", err)
			k.mu.Unlock()
			k.end()
			return
		case pingStop:
			k.log.Debug("mcpsup: keepalive ping not served; pinging stops", "verdict", v.String())
			return
		default:
			k.log.Debug("mcpsup: keepalive ping failed; the session is kept", "verdict", v.String())
		}
	}
}

// pingOnce sends one ping bounded by the interval on the clock; timedOut
// reports that the bound cut it.
func (k *KeepAlive) pingOnce() (bool, error) {
	ctx, cancel := context.WithCancel(k.life)
	defer cancel()
	var mu sync.Mutex
	timedOut := false
	timer := k.clock.AfterFunc(k.every, func() {
		mu.Lock()
		timedOut = true
		mu.Unlock()
		cancel()
	})
	err := k.ping(ctx)
	timer.Stop()
	mu.Lock()
	defer mu.Unlock()
	// Cut by the bound only if the ping ended with its context: an answer
	// that came just before the bound is the answer.
	cut := timedOut && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
	return cut, err
}

// Stop ends the pinging and waits for it. It is idempotent and nil-safe.
func (k *KeepAlive) Stop() {
	if k == nil {
		return
	}
	k.stopLife()
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
// one that had its full time to answer, proves the session dead under the
// keepalive rule (judgePing): a transport failure or a session-expired
// answer does; any other answer shows a live server.
func PingProvesDead(v classify.Verdict) bool { return judgePing(v, maxPingTimeouts) == pingDead }

package session

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
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
	pingDead                    // the session is dead: end it
	pingStop                    // stop pinging, the session lives
)

// judgePing applies the liveness rule (decision record 0005) to a failed
// ping's verdict, timeouts the unanswered pings in a row.
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

// PingProvesDead reports whether a failed liveness request with verdict v,
// given its full time, proves the session dead ([judgePing]).
func PingProvesDead(v classify.Verdict) bool { return judgePing(v, maxPingTimeouts) == pingDead }

// keepAlive sends an Alive every interval, each bounded by it, until life
// or the session ends, or a ping says to stop ([VerifyConfig.KeepAlive]). Not
// go-sdk's ClientOptions.KeepAlive, which closes the session with DELETE on
// any failed ping, a 401 included (mcp/shared.go).
func (v *verified) keepAlive(life context.Context, every time.Duration) {
	defer v.wg.Done()
	tick := v.cfg.Clock.NewTicker(every)
	defer tick.Stop()
	log := v.cfg.Logger
	timeouts := 0
	for {
		select {
		case <-life.Done():
			return
		case <-v.Endable.Done():
			return
		case <-tick.Chan():
		}
		cut, err := bounded(life, v.cfg.Clock, every, v.Endable.Alive)
		if life.Err() != nil {
			return
		}
		if err == nil {
			timeouts = 0
			continue
		}
		verdict := classify.Error(err)
		if cut {
			timeouts++
			verdict = classify.Verdict{Class: classify.Timeout, Detail: err.Error()}
			err = fmt.Errorf("mcpsup: keepalive: %d pings in a row got no answer within %s: %w", timeouts, every, context.DeadlineExceeded)
		} else {
			timeouts = 0
		}
		switch judgePing(verdict, timeouts) {
		case pingDead:
			log.Debug("mcpsup: keepalive ping: the session is dead", "verdict", verdict.String())
			if v.Fail(fmt.Errorf("mcpsup: keepalive ping: %w", err)) {
				// Released detached at once: a dead session gets no DELETE
				// and a stdio process no more time (decision record 0005).
				_ = v.Endable.Detach()
			}
			return
		case pingStop:
			log.Debug("mcpsup: keepalive ping not served; pinging stops", "verdict", verdict.String())
			return
		default:
			log.Debug("mcpsup: keepalive ping failed; the session is kept", "verdict", verdict.String())
		}
	}
}

// bounded runs f with a context of parent canceled after d on clock; cut
// reports that the bound ended f (an answer just before it is the answer).
func bounded(parent context.Context, clock clockwork.Clock, d time.Duration, f func(context.Context) error) (cut bool, err error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var timedOut atomic.Bool
	t := clock.AfterFunc(d, func() { timedOut.Store(true); cancel() })
	err = f(ctx)
	t.Stop()
	return timedOut.Load() && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)), err
}

package session

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
)

// TestJudgePing pins the keepalive rule for every class.
func TestJudgePing(t *testing.T) {
	want := map[classify.Class]pingOutcome{
		classify.Transport:      pingDead,
		classify.SessionExpired: pingDead,
		classify.MethodNotFound: pingStop,
		classify.Canceled:       pingStop,
	}
	for _, c := range classify.Classes() {
		w, ok := want[c]
		if !ok {
			w = pingKeep // unauthorized, rate-limited, server-error, forbidden, application, protocol, timeout (once), unknown
		}
		assert.Equal(t, w, judgePing(classify.Verdict{Class: c}, 1), "%s", c)
	}
	assert.Equal(t, pingDead, judgePing(classify.Verdict{Class: classify.Timeout}, maxPingTimeouts), "unanswered twice in a row")
}

// pinger is a scripted ping: each call reports itself and returns the next
// scripted answer, or the context's error once the keepalive's bound cuts it.
type pinger struct {
	calls   chan struct{}
	answers chan error
}

func newPinger() *pinger { return &pinger{calls: make(chan struct{}), answers: make(chan error)} }

func (p *pinger) ping(ctx context.Context) error {
	p.calls <- struct{}{}
	select {
	case err := <-p.answers:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestKeepaliveOnTheFakeClock drives the keepalive one tick at a time: a
// ping answered 401, 429, 500 or 403 keeps the session, a transport failure
// or a 404 to the session's id ends it without DELETE, with the ping's error,
// and so do two pings in a row cut by the interval; one is tolerated.
func TestKeepaliveOnTheFakeClock(t *testing.T) {
	const every = 10 * time.Second
	kept := []error{
		&classify.HTTPError{Exchange: classify.Exchange{Status: 401, SessionIDSent: true}},
		&classify.HTTPError{Exchange: classify.Exchange{Status: 429, SessionIDSent: true}},
		&classify.HTTPError{Exchange: classify.Exchange{Status: 500, SessionIDSent: true}},
		&classify.HTTPError{Exchange: classify.Exchange{Status: 403, SessionIDSent: true}},
		nil,
	}
	cases := []struct {
		name  string
		last  error          // the answer that ends it; nil: a ping cut by the interval
		class classify.Class // of the session's end
	}{
		{"transport", io.EOF, classify.Transport},
		{"session expired", &classify.HTTPError{Exchange: classify.Exchange{Status: 404, SessionIDSent: true}, Err: mcp.ErrSessionMissing}, classify.SessionExpired},
		{"unanswered twice", nil, classify.Timeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			clock := clockwork.NewFakeClock()
			p := newPinger()
			var ended atomic.Int32
			k := StartKeepAlive(clock, every, slog.New(slog.DiscardHandler), p.ping, func() { ended.Add(1) })
			defer k.Stop()

			tick := func() {
				require.NoError(t, clock.BlockUntilContext(ctx, 1), "the keepalive waits for its ticker")
				clock.Advance(every)
				<-p.calls
			}
			for _, err := range kept {
				tick()
				p.answers <- err
			}
			// One ping cut by the interval is tolerated.
			tick()
			require.NoError(t, clock.BlockUntilContext(ctx, 2), "the ticker and the ping's bound")
			clock.Advance(every)
			<-p.calls // the next tick fired with the cut: its ping
			if c.last != nil {
				p.answers <- c.last
			} else {
				require.NoError(t, clock.BlockUntilContext(ctx, 2))
				clock.Advance(every)
			}
			select {
			case <-k.done: // it stopped by itself
			case <-ctx.Done():
				t.Fatal("the keepalive kept pinging a dead session")
			}
			require.Equal(t, int32(1), ended.Load(), "ended once, by the keepalive")
			cause := k.EndedBy()
			require.Error(t, cause)
			assert.Equal(t, c.class, classify.Error(cause).Class, "%v", cause)
			if c.last != nil {
				assert.True(t, errors.Is(cause, c.last))
			}
		})
	}
}

// TestKeepaliveStops: stop ends the pinging, the ping in flight included,
// without ending the session; a server without ping is not pinged again.
func TestKeepaliveStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	clock := clockwork.NewFakeClock()
	p := newPinger()
	var ended atomic.Int32
	k := StartKeepAlive(clock, time.Second, slog.New(slog.DiscardHandler), p.ping, func() { ended.Add(1) })
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	clock.Advance(time.Second)
	<-p.calls
	k.Stop() // cancels the ping in flight
	k.Stop()
	assert.Zero(t, ended.Load())
	assert.NoError(t, k.EndedBy())

	k = StartKeepAlive(clock, time.Second, slog.New(slog.DiscardHandler), p.ping, func() { ended.Add(1) })
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	clock.Advance(time.Second)
	<-p.calls
	p.answers <- &classify.HTTPError{Exchange: classify.Exchange{Status: 200, RPC: classify.RPCError{Present: true, HasID: true, Code: classify.CodeMethodNotFound}}}
	select {
	case <-k.done:
	case <-ctx.Done():
		t.Fatal("the keepalive kept pinging a server without ping")
	}
	assert.Zero(t, ended.Load())
	var nilKeepalive *KeepAlive
	nilKeepalive.Stop()
	assert.NoError(t, nilKeepalive.EndedBy())
}

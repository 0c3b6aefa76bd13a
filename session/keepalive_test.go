package session_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/session"
)

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

// keptAlive is a session under Verify whose Alive is p's, with a keepalive
// every interval on clock.
func keptAlive(p *pinger, clock clockwork.Clock, every time.Duration) session.Endable {
	in := newInner()
	in.alive = p.ping
	return session.Verify(in, session.VerifyConfig{KeepAlive: every, Clock: clock})
}

// TestKeepaliveOnTheFakeClock drives the keepalive one tick at a time: a
// ping answered 401, 429, 500 or 403 keeps the session, a transport failure
// or a 404 to the session's id ends it, with the ping's error, and so do
// two pings in a row cut by the interval; one is tolerated. A dead ping
// ends the pinging.
func TestKeepaliveOnTheFakeClock(t *testing.T) {
	defer goleak.VerifyNone(t)
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
			s := keptAlive(p, clock, every)
			defer s.Close()

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
			case <-s.Done():
			case <-ctx.Done():
				t.Fatal("the keepalive kept a dead session")
			}
			require.NoError(t, goleak.Find(), "the pinging stopped by itself")
			cause := s.Err()
			require.Error(t, cause)
			assert.True(t, strings.Contains(cause.Error(), "keepalive ping"), "ended by the keepalive: %v", cause)
			assert.Equal(t, c.class, classify.Error(cause).Class, "%v", cause)
			if c.last != nil {
				assert.True(t, errors.Is(cause, c.last))
			}
		})
	}
}

// TestKeepaliveStops: Detach ends the pinging, the ping in flight included,
// which does not end the session; a server without ping is not pinged
// again, and the session lives.
func TestKeepaliveStops(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	clock := clockwork.NewFakeClock()
	p := newPinger()
	s := keptAlive(p, clock, time.Second)
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	clock.Advance(time.Second)
	<-p.calls
	require.NoError(t, s.Detach()) // cancels the ping in flight, waits for the pinging
	require.ErrorIs(t, s.Err(), session.ErrDetached, "the canceled ping ends nothing")

	s = keptAlive(p, clock, time.Second)
	defer s.Close()
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	clock.Advance(time.Second)
	<-p.calls
	p.answers <- &classify.HTTPError{Exchange: classify.Exchange{Status: 200, RPC: classify.RPCError{Present: true, HasID: true, Code: classify.CodeMethodNotFound}}}
	require.NoError(t, goleak.Find(), "the pinging stopped by itself")
	assert.NoError(t, s.Err(), "the session lives")
}

package httpsession

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/session"
)

// TestStreamSwitchRemembered: a persisted Off decision is kept, in
// StreamAuto mode only, while it is younger than Memory; an expired one, or
// one from the future, is forgotten.
func TestStreamSwitchRemembered(t *testing.T) {
	clock := clockwork.NewFakeClock()
	now := clock.Now()
	cases := []struct {
		name  string
		mode  StreamMode
		since time.Time
		off   bool
	}{
		{"within memory", StreamAuto, now.Add(-time.Hour), true},
		{"expired", StreamAuto, now.Add(-25 * time.Hour), false},
		{"from the future", StreamAuto, now.Add(time.Minute), false},
		{"mode on ignores it", StreamOn, now.Add(-time.Hour), false},
	}
	for _, c := range cases {
		s := NewStreamSwitch(SwitchConfig{Mode: c.mode, Clock: clock, Remembered: StreamDecision{Off: true, Since: c.since}})
		d := s.Decision()
		assert.Equal(t, c.off, d.Off, c.name)
		hold, _ := s.state()
		assert.Equal(t, c.off, hold, c.name)
		if c.off {
			assert.Equal(t, c.since.Add(24*time.Hour), d.Until, c.name)
			assert.Equal(t, session.StreamRemembered, d.Why, c.name)
		}
		s.Close()
	}
}

// TestStreamSwitchHostileThenReenabled: the rule's finding turns a
// StreamAuto switch off for Memory, once, and wakes the keepers; when Memory
// has passed on the clock it is on again; both changes are reported, in
// order. StreamOn and StreamOff switches ignore the finding.
func TestStreamSwitchHostileThenReenabled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	clock := clockwork.NewFakeClock()
	reports := make(chan StreamDecision, 4)
	s := NewStreamSwitch(SwitchConfig{Mode: StreamAuto, Memory: time.Hour, Clock: clock, OnStream: func(d StreamDecision) { reports <- d }})
	defer s.Close()
	_, changed := s.state()

	s.hostile()
	s.hostile() // already off: no change
	off := <-reports
	assert.True(t, off.Off)
	assert.Equal(t, session.StreamHostile, off.Why)
	assert.Equal(t, clock.Now(), off.Since)
	assert.Equal(t, clock.Now().Add(time.Hour), off.Until)
	select {
	case <-changed:
	default:
		t.Fatal("the keepers were not woken")
	}
	hold, _ := s.state()
	assert.True(t, hold)

	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	clock.Advance(59 * time.Minute)
	assert.True(t, s.Decision().Off)
	clock.Advance(time.Minute)
	on := <-reports
	assert.False(t, on.Off)
	assert.Equal(t, session.StreamExpired, on.Why)
	hold, _ = s.state()
	assert.False(t, hold)
	assert.Empty(t, reports)

	for _, mode := range []StreamMode{StreamOn, StreamOff} {
		other := NewStreamSwitch(SwitchConfig{Mode: mode, Clock: clock, OnStream: func(d StreamDecision) { t.Errorf("reported %+v", d) }})
		other.hostile()
		assert.False(t, other.Decision().Off)
		hold, _ := other.state()
		assert.Equal(t, mode == StreamOff, hold)
	}
}

// TestStreamSwitchClose: Close stops the timer; the decision stays.
func TestStreamSwitchClose(t *testing.T) {
	clock := clockwork.NewFakeClock()
	s := NewStreamSwitch(SwitchConfig{Mode: StreamAuto, Memory: time.Hour, Clock: clock,
		OnStream: func(d StreamDecision) {
			if !d.Off {
				t.Error("re-enabled after Close")
			}
		}})
	s.hostile()
	s.Close()
	s.Close()
	clock.Advance(2 * time.Hour)
	assert.True(t, s.Decision().Off)
	s.hostile()
}

package events_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
)

func TestRecorderKeepsOrderAndCopies(t *testing.T) {
	var r events.Recorder
	r.Emit(events.Event{Seq: 1, From: "idle", To: "connecting"})
	r.Emit(events.Event{Seq: 2, From: "connecting", To: "connecting"})

	got := r.Events()
	require.Len(t, got, 2)
	require.Equal(t, uint64(1), got[0].Seq)
	require.Equal(t, uint64(2), got[1].Seq)

	got[0].Seq = 99
	require.Equal(t, uint64(1), r.Events()[0].Seq, "Events must return a copy")

	r.Reset()
	require.Zero(t, r.Len())
}

func TestRecorderConcurrentEmit(t *testing.T) {
	var r events.Recorder
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				r.Emit(events.Event{Seq: uint64(i*100 + j)})
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 800, r.Len())
}

func TestSinkFunc(t *testing.T) {
	var got []events.Event
	var s events.Sink = events.SinkFunc(func(e events.Event) { got = append(got, e) })
	s.Emit(events.Event{Kind: events.KindTransition, Server: "a"})
	require.Equal(t, []events.Event{{Kind: events.KindTransition, Server: "a"}}, got)
}

func TestRecorderWaitForWakesOnTheEventSought(t *testing.T) {
	var r events.Recorder
	go func() {
		for i := range 5 {
			r.Emit(events.Event{Seq: uint64(i + 1)})
		}
	}()
	got, err := r.WaitFor(context.Background(), func(evs []events.Event) bool { return len(evs) == 5 })
	require.NoError(t, err)
	require.Equal(t, uint64(5), got[4].Seq)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err = r.WaitFor(ctx, func(evs []events.Event) bool { return len(evs) > 5 })
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, got, 5, "the events last checked")
}

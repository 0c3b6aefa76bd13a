package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

func TestSubscriptionNeverBlocksTheEmitter(t *testing.T) {
	const buffer, n = 4, 100
	sub := events.NewSubscription(buffer)
	done := make(chan struct{})
	go func() { // the emitter; nobody reads until it is done
		defer close(done)
		for i := 1; i <= n; i++ {
			sub.Emit(events.Event{Seq: uint64(i)})
		}
	}()
	<-done // a blocking Emit would hang here

	require.Equal(t, uint64(n-buffer), sub.Dropped())
	for i := 1; i <= buffer; i++ {
		e := <-sub.C()
		require.Equal(t, uint64(i), e.Seq, "the first events are kept, in order")
		require.Zero(t, e.Dropped)
	}

	sub.Emit(events.Event{Seq: n + 1})
	e := <-sub.C()
	require.Equal(t, uint64(n+1), e.Seq)
	require.Equal(t, uint64(n-buffer), e.Dropped, "the next delivered event reports the gap")

	sub.Emit(events.Event{Seq: n + 2})
	require.Zero(t, (<-sub.C()).Dropped, "a gap is reported once")
}

func TestSubscriptionConcurrentEmitters(t *testing.T) {
	sub := events.NewSubscription(8)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				sub.Emit(events.Event{Kind: events.KindTransition})
			}
		}()
	}
	wg.Wait()
	sub.Close()
	var got, reported uint64
	for e := range sub.C() {
		got++
		reported += e.Dropped
	}
	require.Equal(t, uint64(200), got+sub.Dropped(), "every event is delivered or counted")
	require.LessOrEqual(t, reported, sub.Dropped())
}

func TestSubscriptionClose(t *testing.T) {
	sub := events.NewSubscription(0) // taken as 1
	sub.Emit(events.Event{Seq: 1})
	sub.Close()
	sub.Close()
	sub.Emit(events.Event{Seq: 2}) // no panic on a closed channel
	e, ok := <-sub.C()
	require.True(t, ok)
	require.Equal(t, uint64(1), e.Seq, "buffered events survive Close")
	_, ok = <-sub.C()
	require.False(t, ok)
	require.Equal(t, uint64(1), sub.Dropped())
}

func TestJSONLinesConcurrentLinesAreWhole(t *testing.T) {
	var buf bytes.Buffer
	j := events.NewJSONLines(&buf)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 25 {
				j.Emit(events.Event{Kind: events.KindTransition, Server: strings.Repeat("s", i+1), Seq: uint64(k + 1),
					Verdict: rateLimited})
			}
		}()
	}
	wg.Wait()
	require.NoError(t, j.Err())
	require.Equal(t, uint64(200), j.Written())
	evs, err := events.ReadJSONLines(&buf)
	require.NoError(t, err)
	require.Len(t, evs, 200)
	for _, e := range evs {
		require.Equal(t, rateLimited, e.Verdict)
	}
}

func TestJSONLinesRemembersErrors(t *testing.T) {
	var buf bytes.Buffer
	j := events.NewJSONLines(&buf)
	j.Emit(events.Event{Kind: "bad", Verdict: classify.Verdict{Class: classify.Class(99)}})
	j.Emit(events.Event{Kind: events.KindStreamEnabled})
	require.ErrorContains(t, j.Err(), "marshal")
	require.Equal(t, uint64(1), j.Written(), "an event that cannot be marshalled is skipped, the next is written")
	require.Equal(t, 1, strings.Count(buf.String(), "\n"))

	boom := errors.New("pipe closed")
	w := &countingWriter{err: boom}
	j = events.NewJSONLines(w)
	j.Emit(events.Event{Kind: events.KindStreamEnabled})
	j.Emit(events.Event{Kind: events.KindStreamEnabled})
	require.ErrorIs(t, j.Err(), boom)
	require.Equal(t, 1, w.calls, "no write after a failed one")
	require.Zero(t, j.Written())
}

type countingWriter struct {
	calls int
	err   error
}

func (w *countingWriter) Write(p []byte) (int, error) { w.calls++; return 0, w.err }

func TestMulti(t *testing.T) {
	var a, b events.Recorder
	m := events.Multi(&a, nil, &b)
	m.Emit(events.Event{Seq: 1})
	m.Emit(events.Event{Seq: 2})
	require.Equal(t, a.Events(), b.Events())
	require.Equal(t, 2, a.Len())
	events.Multi().Emit(events.Event{}) // empty fan-out is fine
}

func TestRedactingJSONLinesNeverWritesSecrets(t *testing.T) {
	var buf bytes.Buffer
	var r events.Redactor
	r.AddSessionID(sessionID)
	events.NewJSONLines(&buf).Emit(r.Redact(leakyEvent()))
	require.NotContains(t, buf.String(), sessionID)
	require.NotContains(t, buf.String(), token)
	var e events.Event
	require.NoError(t, json.Unmarshal(buf.Bytes(), &e))
	require.Equal(t, events.HashSessionID(sessionID), e.SessionID)
}

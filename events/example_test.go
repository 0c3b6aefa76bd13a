package events_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

func ExampleSinkFunc() {
	s := events.SinkFunc(func(e events.Event) {
		fmt.Printf("%s: %s -> %s (%s)\n", e.Server, e.From, e.To, e.Trigger)
	})
	s.Emit(events.Event{Kind: events.KindTransition, Server: "docs", From: "connecting", To: "ready", Trigger: "discovery-succeeded"})
	// Output: docs: connecting -> ready (discovery-succeeded)
}

func ExampleSubscription() {
	sub := events.NewSubscription(2)
	for seq := uint64(1); seq <= 5; seq++ { // nobody reads yet: 3 are dropped, Emit never waits
		sub.Emit(events.Event{Kind: events.KindTransition, Seq: seq})
	}
	fmt.Println("dropped:", sub.Dropped())
	fmt.Println((<-sub.C()).Seq, (<-sub.C()).Seq)

	sub.Emit(events.Event{Kind: events.KindTransition, Seq: 6})
	e := <-sub.C()
	fmt.Printf("seq %d, %d dropped before it\n", e.Seq, e.Dropped)
	sub.Close()
	// Output:
	// dropped: 3
	// 1 2
	// seq 6, 3 dropped before it
}

func ExampleSlog() {
	h := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{} // keep the output stable
		}
		return a
	}})
	s := events.Slog(slog.New(h))
	s.Emit(events.Event{Kind: events.KindCallFailed, Server: "docs", Op: "tools/call", Name: "search",
		Delivery: events.DeliveryAnswered, Generation: 1,
		Verdict: classify.Verdict{Class: classify.RateLimited, HTTPStatus: 429, RetryAfter: 30 * time.Second}})
	// Output: level=WARN msg="mcpsup call-failed" server=docs verdict.class=rate-limited verdict.http_status=429 verdict.retry_after=30s generation=1 op=tools/call name=search delivery=answered
}

func ExampleJSONLines() {
	j := events.NewJSONLines(os.Stdout)
	j.Emit(events.Event{Kind: events.KindRetryScheduled, Server: "docs", Attempt: 2, Delay: 1500 * time.Millisecond,
		Time: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC), Verdict: classify.Verdict{Class: classify.ServerError, HTTPStatus: 503}})
	if err := j.Err(); err != nil {
		fmt.Println(err)
	}
	// Output: {"v":1,"kind":"retry-scheduled","server":"docs","attempt":2,"time":"2026-03-14T09:00:00Z","verdict":{"class":"server-error","http_status":503},"delay_ms":1500}
}

func ExampleMulti() {
	var rec events.Recorder
	sub := events.NewSubscription(16)
	defer sub.Close()
	sink := events.Multi(&rec, sub) // give this to the supervisor's config
	sink.Emit(events.Event{Kind: events.KindStreamEnabled, Server: "docs"})
	fmt.Println(rec.Len(), (<-sub.C()).Kind)
	// Output: 1 stream-enabled
}

func ExampleRedactor_Redact() {
	var r events.Redactor
	r.AddSessionID("7f3c2a9be1d04c5b") // what the server sent as Mcp-Session-Id
	sink := events.NewJSONLines(os.Stdout)
	sink.Emit(r.Redact(events.Event{Kind: events.KindSessionEnded, Server: "docs", SessionID: "7f3c2a9be1d04c5b",
		Detail: "GET failed (session ID: 7f3c2a9be1d04c5b) with Authorization: Bearer abc.def"}))
	// Output: {"v":1,"kind":"session-ended","server":"docs","session_id":"sid:104ad0b3","detail":"GET failed (session ID: sid:104ad0b3) with Authorization: [redacted]"}
}

func ExampleHashSessionID() {
	fmt.Println(events.HashSessionID("abc"))
	// Output: sid:ba7816bf
}

// A test that saw a supervisor reach a state waits for the event announcing
// it: events reach a sink on their own goroutine.
func ExampleRecorder_WaitFor() {
	var rec events.Recorder
	go rec.Emit(events.Event{Kind: events.KindTransition, From: events.StateConnecting, To: events.StateReady})
	evs, err := rec.WaitFor(context.Background(), func(evs []events.Event) bool {
		return len(evs) > 0 && evs[len(evs)-1].To == events.StateReady
	})
	fmt.Println(len(evs), err)
	// Output: 1 <nil>
}

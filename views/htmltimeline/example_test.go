package htmltimeline_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/views/htmltimeline"
)

func recording() []events.Event {
	t0 := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	return []events.Event{
		{Kind: events.KindTransition, Server: "search", Seq: 1, Time: t0, From: "idle", To: "connecting", Trigger: "started", Generation: 1},
		{Kind: events.KindTransition, Server: "search", Seq: 2, Time: t0.Add(80 * time.Millisecond), From: "connecting", To: "ready", Trigger: "discovery-succeeded", Generation: 1},
		{Kind: events.KindCallFailed, Server: "search", Seq: 3, Time: t0.Add(2 * time.Second), Op: "tools/call", Name: "query", Delivery: events.DeliveryAnswered, Generation: 1},
		{Kind: events.KindTransition, Server: "search", Seq: 4, Time: t0.Add(2 * time.Second), From: "ready", To: "ready", Trigger: "call-failed", Generation: 1},
	}
}

// Write makes one self-contained page of a recording, e.g. the events
// events.ReadJSONLines read from a file events.JSONLines wrote.
func ExampleWrite() {
	f, err := os.CreateTemp("", "timeline-*.html")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := htmltimeline.Write(f, recording()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("written; open it in a browser")
	// Output: written; open it in a browser
}

// Build is what the page draws: here one lane, two bands (the internal
// transition draws none) and one failed call.
func ExampleBuild() {
	m := htmltimeline.Build(recording())
	for _, l := range m.Lanes {
		fmt.Println(l.Server, l.Events, "events")
		for _, b := range l.Bands {
			fmt.Printf("  %s for %s\n", b.State, b.End.Sub(b.Start))
		}
		for _, mk := range l.Markers {
			fmt.Printf("  %s at +%s\n", mk.Kind, mk.Time.Sub(m.Start))
		}
	}
	// Output:
	// search 4 events
	//   connecting for 80ms
	//   ready for 1.92s
	//   call-failed at +2s
}

// Live serves the page and streams events to it as they are emitted; pass
// it as (one of) the supervisors' sinks and serve it on loopback.
func ExampleLive() {
	live := htmltimeline.NewLive(0)
	srv := httptest.NewServer(live) // a host: http.Server on 127.0.0.1
	defer srv.Close()
	defer live.Close()

	live.Emit(recording()[0])
	resp, err := http.Get(srv.URL + "/events")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && sc.Text() != "" {
		fmt.Println(sc.Text())
	}
	// Output:
	// id: 1
	// data: {"v":1,"kind":"transition","server":"search","seq":1,"from":"idle","to":"connecting","trigger":"started","generation":1,"time":"2026-03-14T09:00:00Z"}
}

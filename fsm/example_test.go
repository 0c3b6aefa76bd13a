package fsm_test

import (
	"fmt"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/fsm"
)

// A shell drives the machine from one goroutine: each fact becomes a
// Trigger; each step returns its transition, which the shell emits, and its
// Commands, which the shell executes; a command's result comes back as a
// trigger stamped with the command's generation.
func ExampleMachine_Step() {
	m := fsm.New(fsm.Config{})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var seq uint64
	show := func(tr fsm.Trigger) {
		tr.Now = now
		out, err := m.Step(tr)
		if err != nil {
			fmt.Println("  error:", err)
			return
		}
		if out.Transitioned() {
			seq++ // the shell numbers and emits events
			e := out.Event
			fmt.Printf("  event %d: %s -> %s on %s\n", seq, e.From, e.To, e.Trigger)
		}
		for _, c := range out.Commands {
			fmt.Printf("  command %s (generation %d)\n", c.Kind, c.Generation)
		}
	}

	show(fsm.Trigger{Kind: events.TriggerStarted, Resume: fsm.ResumeBlind})
	show(fsm.Trigger{Kind: events.TriggerAttached, Generation: 1})
	// The resumed session is stale: the server answers 400 with a null-id -32000.
	show(fsm.Trigger{Kind: events.TriggerDiscoveryFailed, Generation: 1,
		Verdict: classify.Verdict{Class: classify.SessionExpired, HTTPStatus: 400}})
	show(fsm.Trigger{Kind: events.TriggerHandshakeSucceeded, Generation: 2})
	show(fsm.Trigger{Kind: events.TriggerDiscoverySucceeded, Generation: 2})
	// A late result of the old session is refused.
	show(fsm.Trigger{Kind: events.TriggerDiscoverySucceeded, Generation: 1})
	fmt.Println(m.State(), m.Generation())

	// Output:
	//   event 1: idle -> resuming-blind on started
	//   command attach (generation 1)
	//   event 2: resuming-blind -> probing on attached
	//   command probe (generation 1)
	//   event 3: probing -> stale-recovering on discovery-failed
	//   command detach-session (generation 1)
	//   command clear-session (generation 1)
	//   command dial (generation 2)
	//   event 4: stale-recovering -> stale-recovering on handshake-succeeded
	//   command list-declared (generation 2)
	//   event 5: stale-recovering -> ready on discovery-succeeded
	//   command publish-catalog (generation 2)
	//   error: fsm: trigger discovery-succeeded of generation 1, current generation is 2
	// ready 2
}

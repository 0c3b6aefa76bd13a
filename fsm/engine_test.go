package fsm

import (
	"fmt"
	"html"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// TestEngineAgreesWithTable reads the shared stateless machine's own
// configuration (ToGraph) and checks it row for row against the table: every
// row is configured once, from its state, for its trigger, to its state, as
// a transition or an ignore (the table's ignores and internal transitions),
// guarded exactly when the row has guards, and nothing else is configured.
// Which row's guards pass when is TestExhaustive's part: it steps every
// (state, trigger, verdict class, flags) through the engine.
func TestEngineAgreesWithTable(t *testing.T) {
	line := regexp.MustCompile(`^\t"?([^" ]+)"? -> "?([^" ]+)"? \[label=<<TABLE BORDER="0">(.*)</TABLE>>\];$`)
	cell := regexp.MustCompile(`<TR><TD(?: ALIGN="LEFT")?>(.*?)</TD></TR>`)
	var got []string
	for _, l := range strings.Split(engine.ToGraph(), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		section := "permit"
		for _, c := range cell.FindAllStringSubmatch(m[3], -1) {
			switch c[1] {
			case "<B>Reentry</B>":
				section = "reentry"
			case "<B>Internal</B>":
				section = "internal"
			case "<B>Ignored</B>":
				section = "ignore"
			default:
				entry := html.UnescapeString(c[1])
				trigger, _, _ := strings.Cut(entry, " ")
				guarded := strings.Contains(entry, "[")
				got = append(got, fmt.Sprintf("%s -%s-> %s %s guarded=%v", m[1], trigger, m[2], section, guarded))
			}
		}
	}
	var want []string
	for _, r := range table {
		section := "permit"
		if r.Ignore || r.Internal() {
			section = "ignore" // see engine: Step emits an internal row's event
		}
		want = append(want, fmt.Sprintf("%s -%s-> %s %s guarded=%v", r.From, r.Trigger, r.To, section, len(r.Guards) > 0))
	}
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got)
}

// TestMachinesStepConcurrently steps many machines through the one shared
// engine at once, each from its own goroutine, and checks that every one
// takes exactly the path a machine stepped alone takes. Run with -race: the
// engine is only read after it is built.
func TestMachinesStepConcurrently(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func() []string {
		m := New(Config{MaxSessions: 3, Window: time.Minute})
		var path []string
		now := t0
		step := func(tr Trigger) {
			now = now.Add(time.Second)
			tr.Now = now
			if tr.Generation == 1 {
				tr.Generation = m.Generation()
			}
			out, err := m.Step(tr)
			path = append(path, fmt.Sprintf("%s %v %v %v", m.State(), out.Event, out.Commands, err))
		}
		for range 20 {
			step(Trigger{Kind: events.TriggerStarted, Resume: ResumeBlind})
			step(Trigger{Kind: events.TriggerAttached, Generation: 1})
			step(Trigger{Kind: events.TriggerDiscoveryFailed, Generation: 1, Verdict: classify.Verdict{Class: classify.SessionExpired}})
			step(Trigger{Kind: events.TriggerHandshakeSucceeded, Generation: 1})
			step(Trigger{Kind: events.TriggerDiscoverySucceeded, Generation: 1})
			step(Trigger{Kind: events.TriggerSessionDied, Generation: 1, Verdict: classify.Verdict{Class: classify.Transport}})
			step(Trigger{Kind: events.TriggerHandshakeFailed, Generation: 1, Verdict: classify.Verdict{Class: classify.RateLimited}})
			step(Trigger{Kind: events.TriggerRetryDue, Generation: 1})
			step(Trigger{Kind: events.TriggerSessionDied, Generation: 1, Verdict: classify.Verdict{Class: classify.Unauthorized}})
			step(Trigger{Kind: events.TriggerReconnectRequested})
			step(Trigger{Kind: events.TriggerCloseRequested})
			step(Trigger{Kind: events.TriggerRetryDue, Generation: 1})
		}
		return path
	}
	want := run()
	const machines = 16
	paths := make([][]string, machines)
	var wg sync.WaitGroup
	for i := range machines {
		wg.Go(func() { paths[i] = run() })
	}
	wg.Wait()
	for i, p := range paths {
		require.Equal(t, want, p, "machine %d", i)
	}
}

// TestUnguardedRowIsAlone pins what [Machine.rowTaken] relies on: a row
// without guards is the only row of its (state, trigger).
func TestUnguardedRowIsAlone(t *testing.T) {
	for i, r := range table {
		if len(r.Guards) > 0 {
			continue
		}
		require.Equal(t, []int{i}, rowsOf(r.From, r.Trigger), "%s %s", r.From, r.Trigger)
	}
}

package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Command is the one command that regenerates docs/benchmarks.md.
const Command = "go run ./bench/cmd/report"

// Report holds every figure of one run.
type Report struct {
	Machine Machine
	Elapsed time.Duration
	Extra   []ExtraResult
	Listing []ListingResult // the failed-listing part of figure 1
	Ready   []ReadyResult
	Lost    []LostResult
	// Overhead is figure 4 with every call on the run's context;
	// OverheadOwn with a context of its own per call.
	Overhead, OverheadOwn OverheadResult
	Idle                  []IdleResult
	// IdleNote says where the idle figure's server ran and what was not
	// measured.
	IdleNote string
	Micro    []MicroResult
	MicroErr error
	HTML     []MicroResult // HTMLTimeline
	HTMLErr  error
	// Load says what else ran on the machine during the run ("" for
	// nothing known); timings under load are noisy.
	Load string
	// Hub, HubSupervisors and HubMicro are figure 7 (HubFigures).
	Hub            []HubResult
	HubSupervisors []IdleResult
	HubMicro       []MicroResult
	HubErr         error
	// Stdio is figure 9 (StdioRestartTimes).
	Stdio []StdioResult
	// Gateway is figure 10 (GatewayFigures); nil when not run.
	Gateway *GatewayResult
}

// Render writes the report as Markdown.
func (r *Report) Render(w io.Writer) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	m := r.Machine
	p("# mcpsup benchmarks\n\n")
	p("Regenerate with `%s` from the module root (a few minutes; it rewrites this file).\n\n", Command)
	p("Measured %s on %s, %d cores, %s %s/%s; the run took %s. ", m.Date.Format("2006-01-02 15:04 MST"), m.CPU, m.Cores, m.GoVersion, m.OS, m.Arch, r.Elapsed.Round(time.Second))
	if r.Load != "" {
		p("Load: %s. ", r.Load)
	}
	p("Every figure runs a real go-sdk v1.8.0 server on 127.0.0.1 and compares the clients side by side in the same run. ")
	p("Baseline go-sdk clients pin `ProtocolVersion` %s, so they never send `server/discover` (their cheapest handshake).\n\n", pinnedVersion)

	b.WriteString(RenderExtra(r))

	b.WriteString(RenderReady(r.Ready))
	b.WriteString(RenderLost(r.Lost))

	b.WriteString(RenderOverhead(r.Overhead))
	b.WriteString(RenderOverhead(r.OverheadOwn))

	p("## 5. Idle connections\n\n")
	p("%s Heap is HeapAlloc after two GCs, stacks StackInuse after a GC; all are growth over the process before the connections, divided by their number. Goal: heap and stacks together at most 6 KiB more per connection than bare go-sdk + ListTools; setup of 10,000 at most 1.1 times as long. %s The last column counts the goroutines the process started while the connections were opened (runtime/metrics), per connection, the workers excluded: the setup's share that the timing noise of a shared machine does not move.\n\n", r.IdleNote, BareListedNote)
	p("| connections | standalone stream | client | heap per conn | stacks per conn | goroutines per conn | setup | goroutines started per setup |\n|---:|---|---|---:|---:|---:|---:|---:|\n")
	for _, x := range r.Idle {
		if x.Err != nil {
			p("| %d | %s | %s | error: %s | | | | |\n", x.N, onOff(x.Stream), x.Client, cell(x.Err.Error()))
			continue
		}
		p("| %d | %s | %s | %.1f KiB | %.1f KiB | %.2f | %s | %.2f |\n", x.N, onOff(x.Stream), x.Client, x.HeapPerConn/1024, x.StackPerConn/1024, x.GoroutinesPerConn, x.Setup.Round(10*time.Millisecond), x.StartedPerConn)
	}
	for _, line := range IdleExtras(r.Idle) {
		p("\n%s", line)
	}
	p("\n\n")

	p("## 6. Pure cores\n\n")
	p("`go test -run ^$ -bench . -benchmem` in %s. Goal: `fsm` BenchmarkStep at most 300 ns and 1 allocation. "+
		"BenchmarkStatelessAlone is qmuntal/stateless alone, firing a trigger of BenchmarkStep's shape (external state storage read through the context, immediate firing, "+
		"four guarded rows of one state and trigger, the guards reading one field): the engine's own cost on this host, which a Step, built on it, cannot go below.\n\n", strings.Join(MicroPackages, ", "))
	if r.MicroErr != nil {
		p("error: %s\n\n", cell(r.MicroErr.Error()))
	}
	p("| package | benchmark | ns/op | B/op | allocs/op |\n|---|---|---:|---:|---:|\n")
	for _, x := range r.Micro {
		p("| %s | %s | %.1f | %.0f | %.0f |\n", x.Package, x.Name, x.NsPerOp, x.BytesPerOp, x.AllocsPerOp)
	}

	p("\n## 7. HTML timeline\n\n")
	p("`go test -run ^$ -bench . -benchmem %s`: the page of 10,000 synthetic events (five servers) written (`mcpsup-timeline -html`), its Go model built, ", HTMLPackage)
	p("and the page loaded in headless Chromium with `--dump-dom`. The browser row's ns/op is a whole Chromium run, process start included; ")
	p("render-ms is what the page measured from its script's start to the drawing done (every line parsed, the model built, the SVG drawn), ")
	p("ready-ms from navigation start to the drawing done.\n\n")
	if r.HTMLErr != nil {
		p("error: %s\n\n", cell(r.HTMLErr.Error()))
	}
	p("| benchmark | ns/op | B/op | allocs/op | render-ms | ready-ms |\n|---|---:|---:|---:|---:|---:|\n")
	for _, x := range r.HTML {
		p("| %s | %.0f | %.0f | %.0f | %s | %s |\n", x.Name, x.NsPerOp, x.BytesPerOp, x.AllocsPerOp, metric(x, "render-ms"), metric(x, "ready-ms"))
	}
	if len(r.Hub) > 0 || r.HubErr != nil {
		p("\n%s", RenderHub(r.Hub, r.HubSupervisors, r.HubMicro, r.HubErr))
	}
	if len(r.Stdio) > 0 {
		p("\n%s", RenderStdio(r.Stdio))
	}
	if r.Gateway != nil {
		p("\n%s", RenderGateway(*r.Gateway))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// metric renders a benchmark's own metric, "-" when it reports none.
func metric(x MicroResult, unit string) string {
	if v, ok := x.Metrics[unit]; ok {
		return fmt.Sprintf("%.1f", v)
	}
	return "-"
}

func cell(s string) string { return strings.ReplaceAll(shorten(s, 160), "|", "\\|") }

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func okFail(b bool) string {
	if b {
		return "ok"
	}
	return "fails"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// RenderListing writes the failed-listing part of figure 1 (FailedListings)
// as Markdown.
func RenderListing(rs []ListingResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("### Extra HTTP requests per failed listing\n\n")
	p("A fresh connect whose handshake succeeds and whose first %d `tools/list` are answered 403 with an HTML page (a WAF). ", ListingFailures)
	p("Counted at the mcptest gateway until the client listed the tools (or gave up) and the wire was quiet, minus the same client's clean connect; per failure = extra / %d. ", ListingFailures)
	p("mcpsup retries the listing on the live session (`Config.Recovery.ListingRetries`); `%s` reconnects on every error; bare go-sdk retries `ListTools` on its one session. Goal: 1 request per failure.\n\n", ReconnectOnError)
	p("| client | extra requests | per failure | every request of the faulted connect | tools listed |\n|---|---:|---:|---|---|\n")
	for _, r := range rs {
		if r.Err != nil {
			p("| %s | error | | %s | |\n", r.Client, cell(r.Err.Error()))
			continue
		}
		listed := "yes"
		if !r.Ready {
			listed = "no: the session died on the HTML 403, the host must reconnect"
		}
		p("| %s | %d | %.1f | %s | %s |\n", r.Client, r.Extra, r.PerFailure(), cell(r.Breakdown), listed)
	}
	p("\n")
	return b.String()
}

// RenderReady writes figure 2, time to ready, as Markdown.
func RenderReady(ready []ReadyResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## 2. Time to ready with gateway latency\n\n")
	if len(ready) > 0 {
		p("The gateway delays every request by %v (mcptest Delay). Round trips = median time / %v. ", ready[0].Latency, ready[0].Latency)
		p("A resume re-attaches a session persisted by an earlier supervisor (Detach); blind drops the persisted capabilities so all four list methods are probed at once. ")
		p("The 2026-07-28 rows run against a sessionless server (go-sdk's stateless handler): the handshake is `server/discover`, and a known resume reuses the persisted discovery result. ")
		p("Goal: resume within about one round trip.\n\n")
	}
	p("| scenario | runs | median | round trips | min | max | requests to ready |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range ready {
		if x.Err != nil {
			p("| %s | | error: %s | | | | |\n", x.Scenario, cell(x.Err.Error()))
			continue
		}
		p("| %s | %d | %s | %.1f | %s | %s | %d |\n", x.Scenario, x.Runs, ms(x.Median), x.RoundTrips(), ms(x.Min), ms(x.Max), x.Requests)
	}
	p("\n")
	return b.String()
}

// RenderExtra writes figure 1 (ExtraRequests and FailedListings) as
// Markdown.
func RenderExtra(r *Report) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## 1. Extra HTTP requests per failed tools/call\n\n")
	p("The first `tools/call` after the fault is installed fails; then one more call is made. Counted at the mcptest gateway: every request from the failed call until the next call returned and the wire was quiet, except the host's own `tools/call` requests. ")
	p("`%s` closes the session (DELETE), reconnects (initialize, notifications/initialized, and the new session's standalone GET) and lists the tools on any error (failure story S4). ", ReconnectOnError)
	p("Goal: 0 for every application class; the handshake minimum for 404.\n\n")
	p("| failure | client | extra requests | which | next call |\n|---|---|---:|---|---|\n")
	for _, e := range r.Extra {
		if e.Err != nil {
			p("| %s | %s | error | %s | |\n", e.Class, e.Client, cell(e.Err.Error()))
			continue
		}
		next := "ok"
		switch {
		case !e.NextCallOK && !e.NextCallSent:
			next = "fails, nothing sent: session dead, host must reconnect"
		case !e.NextCallOK:
			next = "fails"
		}
		which := e.Breakdown
		if which == "" {
			which = "none"
		}
		p("| %s | %s | %d | %s | %s |\n", e.Class, e.Client, e.Extra, which, next)
	}
	p("\n")
	b.WriteString(RenderListing(r.Listing))
	return b.String()
}

// RenderLost writes figure 3, sessions lost, as Markdown.
func RenderLost(lost []LostResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## 3. Sessions lost in a fixed period\n\n")
	if len(lost) > 0 {
		p("Each client runs for %v behind the gateway (all at once). mcpsup uses StreamAuto with shortened spans for speed: HostileRule span and StreamKeeper span %v, re-dial backoff %v to %v (defaults: 2s span, 1s to 30s). ", lost[0].Period, LostSpan, LostSpan/4, 2*LostSpan)
		p("For go-sdk, every return of `ClientSession.Wait` is a lost session, after which the host connects again. A call at the end checks the connection works; then the server adds a tool, and the last column says whether the client learned of it within %v (list_changed on the push stream, or mcpsup's catalog poll, every %v here, once the stream is off). 2026-07-28 servers are sessionless: their push stream is the `subscriptions/listen` POST, which bare go-sdk sends once and never again. Goal: 0 lost, and the tool seen.\n\n", LostPushWait, LostPollInterval)
	}
	p("| gateway | server era | client | sessions lost | push stream requests | stream turned off | call at end | tool added at end seen |\n|---|---|---|---:|---:|---|---|---|\n")
	for _, x := range lost {
		if x.Err != nil {
			p("| %s | %s | %s | error: %s | | | | |\n", x.Gateway, x.Era, x.Client, cell(x.Err.Error()))
			continue
		}
		off := "n/a"
		if x.Client == Supervised {
			off = yesNo(x.StreamOff)
		}
		p("| %s | %s | %s | %d | %d | %s | %s | %s |\n", x.Gateway, x.Era, x.Client, x.Lost, x.GETs, off, okFail(x.CallOK), yesNo(x.PushAtEnd))
	}
	p("\n")
	return b.String()
}

// ratios renders rs as a list, three decimals each.
func ratios(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%.3f", r)
	}
	return strings.Join(parts, ", ")
}

// interval renders a confidence interval after its value: "" for none.
func interval(i Interval) string {
	if i.Level == 0 {
		return ""
	}
	return fmt.Sprintf(" (%.3f to %.3f)", i.Lo, i.Hi)
}

// ordinal renders 1 as "1st", 2 as "2nd", 7 as "7th".
func ordinal(k int) string {
	suffix := "th"
	switch {
	case k%100 >= 11 && k%100 <= 13:
	case k%10 == 1:
		suffix = "st"
	case k%10 == 2:
		suffix = "nd"
	case k%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(k) + suffix
}

// cpuRatio renders a CPU ratio; zero is one the platform could not
// measure.
func cpuRatio(r float64) string {
	if r == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", r)
}

// RenderOverhead renders figure 4, the CallTool overhead, as markdown.
func RenderOverhead(o OverheadResult) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	if o.OwnContext {
		p("### Each call with a context of its own\n\n")
	} else {
		p("## 4. CallTool overhead on loopback\n\n")
	}
	switch {
	case o.Err != nil:
		p("error: %s\n\n", o.Err)
	case o.OwnContext:
		p("The same three clients and server, made afresh as above, each call made as a Go host makes it: with a context of its own (`context.WithTimeout`, a minute), canceled as the call returns (`defer cancel()`). %d setups of %d rounds of %d calls, paired as above. go-sdk hands a call its result before it has read its answer's body to the end; a request whose context ends then loses its connection (net/http reuses one only after EOF), so the next call dials a new one. The supervisor cancels its call's context only once the answer's stream is closed (`httpsession.AfterAnswers`); the wire layer alone and bare go-sdk do not. Goal as above.\n\n", o.Setups, o.Rounds, o.CallsPerRound)
	default:
		p("One plain go-sdk server (no gateway) and three clients on it, all with the standalone stream open: a supervisor, a go-sdk session on mcpsup's Transport alone (httpsession.Open, no supervisor: the wire layer's share) and a bare ClientSession. Every call carries the run's context, which has a deadline; none is canceled (see the second table for calls that each have their own). %d setups (a fresh server and fresh clients each) of %d rounds of %d calls, the clients taking turns within each round in the six orders in turn. A setup's paired ratio is the median over its rounds of the round's mean over bare go-sdk's, so that the host slowing down or speeding up between rounds (by a tenth on this 2-core machine) moves neither side; the paired ratio is the median of the setups' (each is listed under the table: what one setup's connections, goroutines and memory layout happen to be moves its ratio by a few percent either way, for the wire layer alone as for the supervisor). The medians per call are over all rounds. CPU is the process's CPU time (client, server and runtime, `CLOCK_PROCESS_CPUTIME_ID`) while the client ran its rounds, per call, and its ratio over bare go-sdk's: the work a call costs, which the host's scheduling does not move. ", o.Setups, o.Rounds, o.CallsPerRound)
		p("Allocations and goroutines started are counted for the whole process (client and server; testing.AllocsPerRun, runtime/metrics), so a difference is the client's. Goal: mcpsup within 3%%, at most 8 more allocations per call.\n\n")
	}
	if o.Err == nil {
		p("| client | median per call | paired ratio | CPU per call | CPU ratio | allocs/call | bytes/call | goroutines started/call |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
		row := func(name string, f CallFigures, ratio, cpuRatio string) {
			p("| %s | %s | %s | %s | %s | %.0f | %.0f | %.2f |\n", name, us(f.Median), ratio, us(f.CPU), cpuRatio, f.Allocs, f.Bytes, f.Goroutines)
		}
		row(string(Supervised), o.Supervised, fmt.Sprintf("**%.3f**%s", o.PairedRatio, interval(o.PairedInterval)), cpuRatio(o.CPURatio))
		row("mcpsup wire layer alone", o.Wire, fmt.Sprintf("%.3f%s", o.WirePairedRatio, interval(o.WirePairedInterval)), cpuRatio(o.WireCPURatio))
		row(string(BareSDK), o.Bare, "1", "1")
		p("| **mcpsup extra** | %.3f of the medians | | %+.1f µs | | **%+.0f** | **%+.0f** | **%+.2f** |\n\n", o.Ratio(), float64(o.Supervised.CPU-o.Bare.CPU)/float64(time.Microsecond), o.Supervised.Allocs-o.Bare.Allocs, o.Supervised.Bytes-o.Bare.Bytes, o.Supervised.Goroutines-o.Bare.Goroutines)
		if o.PairedInterval.Level > 0 {
			p("The interval after a paired ratio holds the median over setups with probability at least %.0f%% (the %s smallest and %s largest of the %d setups' ratios; distribution-free, the setups taken as independent samples).\n\n", 100*o.PairedInterval.Level, ordinal(o.PairedInterval.Rank), ordinal(o.PairedInterval.Rank), len(o.SetupRatios))
		}
		p("Paired ratio per setup: mcpsup %s; wire layer alone %s.\n\n", ratios(o.SetupRatios), ratios(o.WireSetupRatios))
	}
	return b.String()
}

// Command report runs every mcpsup benchmark figure and writes
// docs/benchmarks.md. Run it from the module root:
//
//	go run ./bench/cmd/report
//
// It takes a few minutes on a 2-core machine. The idle-connection figure
// talks to a server in a child process (this binary, re-run with
// MCPSUP_BENCH_CHILD=serve) so the heap and goroutines it reports are the
// client's alone; the open-file limit is raised for the large run.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/mcpsup/mcpsup/bench"
)

const childEnv = "MCPSUP_BENCH_CHILD"

// Figure 4 runs overheadSetups fresh setups (the six orders of making the
// clients in turn) of overheadRounds rounds (a multiple of the six
// orders). Setups differ more than rounds do, so many short setups bound
// the median better than a few long ones: 24 give its interval from the
// 7th smallest and largest ratio.
const (
	overheadSetups = 24
	overheadRounds = 12
)

func main() {
	if os.Getenv(childEnv) == "serve" {
		if err := serveChild(); err != nil {
			log.Fatal(err)
		}
		return
	}
	out := flag.String("out", "docs/benchmarks.md", "file to write, relative to the module root")
	period := flag.Duration("period", 15*time.Second, "period of the sessions-lost figure")
	runs := flag.Int("runs", 7, "runs per time-to-ready scenario")
	latency := flag.Duration("latency", 20*time.Millisecond, "gateway latency per request for time to ready")
	small := flag.Int("small", 1000, "connections in the small idle run")
	big := flag.Int("big", 10000, "connections in the large idle run (0 skips it)")
	benchtime := flag.String("benchtime", "1s", "benchtime of the pure-core benchmarks")
	load := flag.String("load", "", "what else ran on the machine, for the run line")
	hubN := flag.Int("hub", 1000, "servers in the hub figure (0 skips it)")
	calltime := flag.String("gatewaycalls", "3000x", "benchtime of the gateway's per-call figure (\"\" skips the gateway figure)")
	only := flag.String("only", "", `"hub": run the hub figure alone and print it to stdout; "idle": the small idle run alone; "extra": figure 1 alone, to stdout; "ready", "lost": the time-to-ready or sessions-lost figure alone, to stdout; "stdio": the stdio restart figure alone; "overhead": the CallTool figure alone; "gateway": the gateway figure alone, to stdout`)
	heapProfile := flag.String("heapprofile", "", `with -only idle: write a heap profile (after GC) per run, named PREFIX-<client>-stream<on|off>.pprof`)
	cpuProfile := flag.String("cpuprofile", "", `with -only idle: write a CPU profile of the client process to this file, its samples labeled "client" and "stream" by run (go tool pprof -tagfocus)`)
	flag.Parse()
	log.SetFlags(0)

	root, err := moduleRoot()
	if err != nil {
		log.Fatal(err)
	}
	limit := raiseOpenFiles()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	if *only == "hub" {
		hubs, sups, micro, err := hubFigures(ctx, root, *hubN, *benchtime)
		fmt.Print(bench.RenderHub(hubs, sups, micro, err))
		return
	}

	if *only == "gateway" {
		g := bench.GatewayFigures(ctx, root, *calltime)
		fmt.Print(bench.RenderGateway(g))
		if g.Err != nil {
			log.Fatal(g.Err)
		}
		return
	}

	if *only == "stdio" {
		fmt.Print(bench.RenderStdio(bench.StdioRestartTimes(ctx, root, *runs)))
		return
	}

	if *only == "overhead" {
		for _, own := range []bool{false, true} {
			o := bench.CallOverhead(ctx, overheadSetups, overheadRounds, 50, own)
			if o.Err != nil {
				log.Fatal(o.Err)
			}
			fmt.Print(bench.RenderOverhead(o))
		}
		return
	}

	if *only == "extra" {
		r := &bench.Report{Extra: bench.ExtraRequests(ctx), Listing: bench.FailedListings(ctx)}
		fmt.Print(bench.RenderExtra(r))
		return
	}
	if *only == "ready" {
		fmt.Print(bench.RenderReady(bench.TimeToReady(ctx, *latency, *runs)))
		return
	}
	if *only == "lost" {
		fmt.Print(bench.RenderLost(bench.SessionsLost(ctx, *period)))
		return
	}

	if *only == "idle" {
		if *heapProfile != "" {
			runtime.MemProfileRate = 1 // every allocation, so small per-connection ones show
		}
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				log.Fatal(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				log.Fatal(err)
			}
			defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
		}
		idleAlone(ctx, *small, *heapProfile)
		return
	}

	start := time.Now()
	r := &bench.Report{Machine: bench.ThisMachine(start), Load: *load}
	log.Print("1/8 extra requests per failed call and per failed listing")
	r.Extra = bench.ExtraRequests(ctx)
	r.Listing = bench.FailedListings(ctx)
	log.Print("2/8 time to ready")
	r.Ready = bench.TimeToReady(ctx, *latency, *runs)
	log.Printf("3/8 sessions lost in %v", *period)
	r.Lost = bench.SessionsLost(ctx, *period)
	log.Print("4/8 CallTool overhead")
	r.Overhead = bench.CallOverhead(ctx, overheadSetups, overheadRounds, 50, false)
	r.OverheadOwn = bench.CallOverhead(ctx, overheadSetups, overheadRounds, 50, true)
	log.Print("5/8 idle connections")
	r.Idle, r.IdleNote = idle(ctx, *small, *big, limit)
	log.Print("6/8 pure cores")
	r.Micro, r.MicroErr = bench.Micro(ctx, root, *benchtime)
	log.Print("7/8 HTML timeline")
	r.HTML, r.HTMLErr = bench.HTMLTimeline(ctx, root, *benchtime)
	if *hubN > 0 {
		log.Printf("8/8 %d servers in one hub", *hubN)
		r.Hub, r.HubSupervisors, r.HubMicro, r.HubErr = hubFigures(ctx, root, *hubN, *benchtime)
	}
	log.Print("and the stdio restart")
	r.Stdio = bench.StdioRestartTimes(ctx, root, *runs)
	if *calltime != "" {
		log.Print("and the gateway")
		g := bench.GatewayFigures(ctx, root, *calltime)
		r.Gateway = &g
	}
	r.Elapsed = time.Since(start)

	path := *out
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Render(f); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s in %v", path, r.Elapsed.Round(time.Second))
}

// idle runs figure 5 against a server in a child process.
func idle(ctx context.Context, small, big int, limit uint64) ([]bench.IdleResult, string) {
	url, stop, err := startChild()
	if err != nil {
		return []bench.IdleResult{{N: small, Err: err}}, "The server could not start."
	}
	defer stop()
	type run struct {
		n      int
		stream bool
	}
	runs := []run{{small, true}, {small, false}}
	note := fmt.Sprintf("The server runs in a child process (a plain go-sdk server, stateful), so these are the client's costs alone; RLIMIT_NOFILE is %d. ", limit)
	if big > 0 {
		// An open standalone stream holds one TCP connection per session.
		stream := uint64(big)+512 < limit
		runs = append(runs, run{big, stream})
		if stream {
			runs = append(runs, run{big, false})
		} else {
			note += fmt.Sprintf("The %d-connection run has the standalone stream off: the open-file limit does not allow a stream per session. ", big)
		}
	}
	note += "mcpsup uses StreamAuto (stream on) or StreamOff, Era2025; go-sdk sessions use DisableStandaloneSSE for stream off. Both share one http.Transport per run; sessions are opened 16 at a time."
	if err := bench.WarmIdle(ctx, url, max(small, big)); err != nil {
		return []bench.IdleResult{{N: small, Err: err}}, "The warm-up failed."
	}
	note += " Before the first run, 16 connections of every kind are opened and closed, and 8 goroutines per connection started and ended: process-wide caches and pools are warm, and the runtime's goroutine descriptors (allocated once, then reused) are counted by no run."
	note += " Each kind runs twice, the kinds in one order and then in the reverse order; the row is the run that set up faster (a run alone on a 2-core machine varies by about a tenth)."
	var out []bench.IdleResult
	for _, r := range runs {
		best := map[bench.Client]bench.IdleResult{}
		for pass := range 2 {
			order := slices.Clone(bench.IdleClients)
			if pass == 1 {
				slices.Reverse(order)
			}
			for _, k := range order {
				log.Printf("   %d %s stream=%v (run %d of 2)", r.n, k, r.stream, pass+1)
				res := bench.IdleConnections(ctx, url, k, r.n, r.stream)
				if b, ok := best[k]; !ok || res.Err != nil || (b.Err == nil && res.Setup < b.Setup) {
					best[k] = res
				}
			}
		}
		for _, k := range bench.IdleClients {
			out = append(out, best[k])
		}
	}
	return out, note
}

// idleAlone runs the small idle run of figure 5 and prints one line per
// client and stream setting; with a profile prefix it also writes a heap
// profile of each run while its connections are open.
func idleAlone(ctx context.Context, n int, profile string) {
	url, stop, err := startChild()
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	if err := bench.WarmIdle(ctx, url, n); err != nil {
		log.Fatal(err)
	}
	var rs []bench.IdleResult
	for _, stream := range []bool{true, false} {
		for _, k := range bench.IdleClients {
			var atPeak func()
			if profile != "" {
				name := fmt.Sprintf("%s-%s-stream%s.pprof", profile, k, map[bool]string{true: "on", false: "off"}[stream])
				atPeak = func() { writeHeapProfile(name) }
			}
			var r bench.IdleResult
			labels := pprof.Labels("client", string(k), "stream", strconv.FormatBool(stream))
			pprof.Do(ctx, labels, func(ctx context.Context) { r = bench.IdleConnectionsAt(ctx, url, k, n, stream, atPeak) })
			if r.Err != nil {
				log.Fatalf("%d %s stream=%v: %v", n, k, stream, r.Err)
			}
			fmt.Printf("%d %-23s stream=%-5v heap/conn %6.1f KiB  goroutines/conn %.2f  setup %v  started/setup %.2f\n",
				n, k, stream, r.HeapPerConn/1024, r.GoroutinesPerConn, r.Setup.Round(time.Millisecond), r.StartedPerConn)
			rs = append(rs, r)
		}
	}
	for _, line := range bench.IdleExtras(rs) {
		fmt.Println(line)
	}
}

// writeHeapProfile writes the live heap, after a collection, to name.
func writeHeapProfile(name string) {
	runtime.GC()
	f, err := os.Create(name)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

// hubFigures runs figure 7 against a server in a child process.
func hubFigures(ctx context.Context, root string, n int, benchtime string) ([]bench.HubResult, []bench.IdleResult, []bench.MicroResult, error) {
	url, stop, err := startChild()
	if err != nil {
		return nil, nil, nil, err
	}
	defer stop()
	return bench.HubFigures(ctx, url, root, n, benchtime)
}

// startChild runs this binary as the idle figure's server and returns its
// URL and a function that stops it.
func startChild() (string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"=serve")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("child server: %w", err)
	}
	return line[:len(line)-1], stop, nil
}

// serveChild serves until stdin closes.
func serveChild() error {
	srv, err := bench.NewPlainServer()
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Println(srv.URL())
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

// raiseOpenFiles raises RLIMIT_NOFILE as far as allowed (the child server
// inherits it) and returns the soft limit in force.
func raiseOpenFiles() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	want := syscall.Rlimit{Cur: 65536, Max: max(lim.Max, 65536)}
	if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) != nil {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	return lim.Cur
}

// moduleRoot finds the directory of go.mod from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: run from the module root")
		}
		dir = parent
	}
}

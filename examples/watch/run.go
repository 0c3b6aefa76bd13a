package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/supervisor"
	"github.com/mcpsup/mcpsup/views"
)

// options are the parsed command-line flags.
type options struct {
	url        string
	config     string // an mcpServers file: watch every server in it
	name       string
	resumePath string
	stream     supervisor.StreamPolicy
	eventsPath string
	endSession bool
	timeout    time.Duration
	keepAlive  time.Duration // supervisor.Config.Recovery.KeepAlive of every server
	httpAddr   string
	httpRemote bool
	calls      []toolCall    // -call, in order
	every      time.Duration // -every: the calls again after this long
}

// defaultKeepAlive is -keepalive's default: an idle server that died is
// seen within three of them (supervisor.Config.Recovery.KeepAlive), not left ready on
// the timeline until a call or the stream's re-dial finds out.
const defaultKeepAlive = 15 * time.Second

// usageError is a bad command line (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// parseFlags parses args; -h returns flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.url, "url", "", "the MCP server's streamable HTTP endpoint (this or -config is required)")
	fs.StringVar(&o.config, "config", "", "an mcpServers file: watch every server in it (url and command entries) through one hub")
	fs.StringVar(&o.name, "name", "", "the server's name in events (default: the URL's host)")
	fs.StringVar(&o.resumePath, "resume", "", "resume state file (with -config: a directory of them): read at start if it exists, written at exit")
	sse := fs.String("standalone-sse", "auto", "standalone SSE stream: on, off or auto")
	fs.StringVar(&o.eventsPath, "events", "", "append every event to this file as JSON lines")
	fs.BoolVar(&o.endSession, "end-session", false, "at exit, end the session (DELETE) and remove the resume file")
	fs.DurationVar(&o.timeout, "timeout", 0, "stop after this long (0: run until interrupted)")
	fs.DurationVar(&o.keepAlive, "keepalive", defaultKeepAlive, "ping each server this often, so one that died while idle leaves ready (0: off)")
	fs.StringVar(&o.httpAddr, "http", "", "serve the live HTML timeline on this address, e.g. 127.0.0.1:8080 (loopback only unless -http-allow-remote)")
	fs.BoolVar(&o.httpRemote, "http-allow-remote", false, "let -http listen on a non-loopback address and answer any Host")
	fs.Func("call", "call a tool once ready: NAME or NAME={json arguments}; repeatable, in order", func(s string) error {
		c, err := parseCall(s)
		if err == nil {
			o.calls = append(o.calls, c)
		}
		return err
	})
	fs.DurationVar(&o.every, "every", 0, "with -call: make the calls again after this long, until stopped (0: once)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() != 0:
		return o, &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case o.url == "" && o.config == "":
		return o, &usageError{"-url or -config is required"}
	case o.url != "" && o.config != "":
		return o, &usageError{"-url and -config exclude each other"}
	case o.config != "" && o.name != "":
		return o, &usageError{"-name names the one server of -url; with -config the file names them"}
	case o.timeout < 0:
		return o, &usageError{"-timeout must not be negative"}
	case o.keepAlive < 0:
		return o, &usageError{"-keepalive must not be negative"}
	case o.httpRemote && o.httpAddr == "":
		return o, &usageError{"-http-allow-remote needs -http"}
	case o.every < 0:
		return o, &usageError{"-every must not be negative"}
	case o.every > 0 && len(o.calls) == 0:
		return o, &usageError{"-every needs -call"}
	case len(o.calls) > 0 && o.config != "":
		return o, &usageError{"-call calls the one server of -url, not with -config"}
	}
	if o.httpAddr != "" && !o.httpRemote {
		if err := requireLoopback(o.httpAddr); err != nil {
			return o, &usageError{err.Error()}
		}
	}
	if err := parseStream(*sse, &o); err != nil {
		return o, err
	}
	if o.config != "" {
		return o, nil
	}
	u, err := url.Parse(o.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return o, &usageError{fmt.Sprintf("-url %q is not an http or https URL", o.url)}
	}
	if o.name == "" {
		o.name = u.Host
	}
	return o, nil
}

// parseStream reads the -standalone-sse flag into o.
func parseStream(sse string, o *options) error {
	switch sse {
	case "auto":
		o.stream = supervisor.StreamAuto
	case "on":
		o.stream = supervisor.StreamOn
	case "off":
		o.stream = supervisor.StreamOff
	default:
		return &usageError{fmt.Sprintf("-standalone-sse %q: want on, off or auto", sse)}
	}
	return nil
}

// run is the command without the process. It supervises the endpoint until
// ctx ends (the signal) or -timeout elapses, then detaches and saves the
// resume state (or, with -end-session, closes). It returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, "watch:", ue.msg)
		}
		return 2
	}
	do := watch
	if o.config != "" {
		do = watchMany
	}
	if err := do(ctx, o, &lockedWriter{w: stdout}); err != nil {
		fmt.Fprintln(stderr, "watch:", err)
		return 1
	}
	return 0
}

// watch runs one supervised session as o says, writing to out.
func watch(ctx context.Context, o options, out io.Writer) error {
	rs, err := loadResume(o.resumePath, o.url)
	if err != nil {
		return err
	}

	sinks := []events.Sink{views.LiveTimeline(out)}
	if o.httpAddr != "" {
		live, stop, err := serveTimeline(o.httpAddr, o.httpRemote, out)
		if err != nil {
			return err
		}
		defer stop()
		sinks = append(sinks, live)
	}
	var jl *events.JSONLines
	if o.eventsPath != "" {
		f, err := os.OpenFile(o.eventsPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("events file: %w", err)
		}
		defer f.Close()
		jl = events.NewJSONLines(f)
		sinks = append(sinks, jl)
	}

	// Our own transport, so its idle connections are closed at exit.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	sup, err := supervisor.New(supervisor.Config{
		Endpoint: o.url,
		Name:     o.name,
		Resume:   rs,
		HTTP:     supervisor.HTTPConfig{HTTPClient: &http.Client{Transport: transport}},
		Stream:   supervisor.StreamConfig{Policy: o.stream},
		Recovery: supervisor.RecoveryConfig{KeepAlive: o.keepAlive},
		Observe:  supervisor.ObserveConfig{Events: events.Multi(sinks...)},
	})
	if err != nil {
		return err
	}
	if rs != nil {
		fmt.Fprintf(out, "resuming session %s from %s (protocol %s, %s)\n", sessionLabel(rs.SessionID), o.resumePath, rs.ProtocolVersion, resumeKind(rs))
	}

	runCtx := ctx
	if o.timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	sup.Start()
	var reporter sync.WaitGroup
	reporter.Go(func() { reportCatalogs(runCtx, sup, out) })
	if len(o.calls) > 0 {
		reporter.Go(func() { callTools(runCtx, sup, o.calls, o.every, out) })
	}
	<-runCtx.Done()
	reporter.Wait()

	why := "interrupted"
	if ctx.Err() == nil {
		why = fmt.Sprintf("-timeout %s elapsed", o.timeout)
	}
	state := sup.State()
	reason, verdict := sup.Failure()
	fmt.Fprintf(out, "stopping (%s) in state %s, generation %d, %d session(s) opened\n", why, state, sup.Generation(), sup.SessionsOpened())

	var errs []error
	if o.endSession {
		_ = sup.Close()
		fmt.Fprintln(out, "session ended (DELETE)")
		if err := removeResume(o.resumePath, out); err != nil {
			errs = append(errs, err)
		}
	} else {
		_ = sup.Detach()
		if err := saveResume(o.resumePath, sup.ResumeState(), out); err != nil {
			errs = append(errs, err)
		}
	}
	if jl != nil {
		if err := jl.Err(); err != nil {
			errs = append(errs, fmt.Errorf("events file: %w", err))
		}
	}
	if state == supervisor.Failed && reason != "" {
		errs = append(errs, fmt.Errorf("the connection ended in a terminal failed state: %s (%s)", reason, verdict))
	}
	return errors.Join(errs...)
}

func resumeKind(rs *supervisor.ResumeState) string {
	if rs.InitializeResult == nil {
		return "capabilities unknown: blind resume"
	}
	return "capabilities known"
}

// lockedWriter serialises the timeline lines, written from the supervisor's
// goroutine, and the catalog listings.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

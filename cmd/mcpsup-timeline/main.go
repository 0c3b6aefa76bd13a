// Command mcpsup-timeline prints a JSON-lines event recording (written by
// events.JSONLines) as a readable per-server timeline, or with -mermaid as a
// Mermaid stateDiagram-v2 of the path each server took, or with -html as a
// self-contained HTML page (package htmltimeline: a lane per server, state
// bands, session boundaries, failed calls, zoom and pan).
//
// Usage:
//
//	mcpsup-timeline [-mermaid | -html out.html] [-server name] [file.jsonl]
//
// With no file, or "-", it reads standard input. It exits 0 on success, 1
// when the recording cannot be read (the error names the line), 2 on a usage
// error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/views"
	"github.com/mcpsup/mcpsup/views/htmltimeline"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the command without the process: it parses args, reads the
// recording from the named file or stdin, and writes to stdout and stderr.
// It returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpsup-timeline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mermaid := fs.Bool("mermaid", false, "print a Mermaid stateDiagram-v2 of the path taken instead of the timeline")
	htmlPath := fs.String("html", "", "write a self-contained HTML page of the timeline to this file instead")
	server := fs.String("server", "", "show only the server with this name")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcpsup-timeline [-mermaid | -html out.html] [-server name] [file.jsonl]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 1 || (*mermaid && *htmlPath != "") {
		fs.Usage()
		return 2
	}

	in, name := stdin, "stdin"
	if path := fs.Arg(0); path != "" && path != "-" {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(stderr, "mcpsup-timeline:", err)
			return 1
		}
		defer f.Close()
		in, name = f, path
	}
	evs, err := events.ReadJSONLines(in)
	if err != nil {
		fmt.Fprintf(stderr, "mcpsup-timeline: %s: %v\n", name, err)
		return 1
	}
	if *server != "" {
		evs = only(evs, *server)
		if len(evs) == 0 {
			fmt.Fprintf(stderr, "mcpsup-timeline: %s: no events of server %q\n", name, *server)
			return 1
		}
	}

	if *htmlPath != "" {
		if err := writeHTML(*htmlPath, evs); err != nil {
			fmt.Fprintln(stderr, "mcpsup-timeline:", err)
			return 1
		}
		return 0
	}
	write := views.WriteTimeline
	if *mermaid {
		write = views.WriteMermaid
	}
	if err := write(stdout, evs); err != nil {
		fmt.Fprintln(stderr, "mcpsup-timeline:", err)
		return 1
	}
	return 0
}

func only(evs []events.Event, server string) []events.Event {
	var out []events.Event
	for _, e := range evs {
		if e.Server == server {
			out = append(out, e)
		}
	}
	return out
}

// writeHTML writes the page of evs to path, replacing the file.
func writeHTML(path string, evs []events.Event) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := htmltimeline.Write(f, evs); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/supervisor"
	"github.com/mcpsup/mcpsup/views"
)

// watchMany watches every server of the -config file (streamable HTTP and
// stdio entries alike) through one hub: one
// timeline of all their events (each line names its server), the merged
// catalog's changes, and at exit each server's health. With -resume, the
// directory keeps one resume state per server (hub.FileStore).
func watchMany(ctx context.Context, o options, out io.Writer) (err error) {
	f, err := hub.LoadServers(o.config)
	if err != nil {
		return err
	}
	sinks := []events.Sink{views.LiveTimeline(out)}
	if o.eventsPath != "" {
		ef, err := os.OpenFile(o.eventsPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("events file: %w", err)
		}
		defer ef.Close()
		jl := events.NewJSONLines(ef)
		sinks = append(sinks, jl)
		defer func() {
			if jerr := jl.Err(); jerr != nil {
				err = errors.Join(err, fmt.Errorf("events file: %w", jerr))
			}
		}()
	}
	var store hub.Store
	if o.resumePath != "" {
		store = &hub.FileStore{Dir: o.resumePath}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	h := hub.New(hub.Config{
		Supervisor: supervisor.Config{HTTP: supervisor.HTTPConfig{HTTPClient: &http.Client{Transport: transport}}, Stream: supervisor.StreamConfig{Policy: o.stream}, Recovery: supervisor.RecoveryConfig{KeepAlive: o.keepAlive}},
		Store:      store,
		Events:     events.Multi(sinks...),
	})
	addErr := h.AddServers(ctx, f)
	fmt.Fprintf(out, "watching %d server(s) of %s\n", len(h.Names()), o.config)

	runCtx := ctx
	if o.timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	<-runCtx.Done()
	why := "interrupted"
	if ctx.Err() == nil {
		why = fmt.Sprintf("-timeout %s elapsed", o.timeout)
	}
	fmt.Fprintf(out, "stopping (%s)\n", why)
	health := h.Health()
	for _, hl := range health {
		fmt.Fprintf(out, "  %-16s %-16s gen %d, %d session(s), %d tools\n", hl.Server, hl.State, hl.Generation, hl.SessionsOpened, hl.Tools)
	}
	var stopErr error
	if o.endSession {
		stopErr = h.Close()
		fmt.Fprintln(out, "sessions ended (DELETE)")
	} else {
		stopErr = h.Detach()
		if store != nil {
			fmt.Fprintf(out, "sessions detached (no DELETE); resume states saved in %s\n", o.resumePath)
		}
	}
	errs := []error{addErr, stopErr}
	for _, hl := range health {
		if hl.State == supervisor.Failed && hl.Reason != "" {
			errs = append(errs, fmt.Errorf("server %q ended in a terminal failed state: %s", hl.Server, hl.Reason))
		}
	}
	return errors.Join(errs...)
}

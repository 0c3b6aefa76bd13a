package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/views/htmltimeline"
)

// shutdownTimeout bounds how long stopping the timeline server waits for
// requests in flight (the event streams end at once).
const shutdownTimeout = 5 * time.Second

// requireLoopback refuses an address whose host is not a loopback IP or
// "localhost": an empty host (":8080") listens on every interface.
func requireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-http %q: %v", addr, err)
	}
	if !isLoopbackHost(host) {
		return fmt.Errorf("-http %q is not a loopback address (127.0.0.1, [::1], localhost); -http-allow-remote serves others", addr)
	}
	return nil
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackOnly answers 403 to a request whose Host header names anything but
// a loopback host: a page of another site that rebinds its name to 127.0.0.1
// must not read the events.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if !isLoopbackHost(host) {
			http.Error(w, "forbidden: this timeline answers loopback hosts only", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// serveTimeline listens on addr and serves the live timeline page there. It
// returns the sink to feed and a function that ends the streams and stops
// the server.
func serveTimeline(addr string, remote bool, out io.Writer) (events.Sink, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("-http: %w", err)
	}
	live := htmltimeline.NewLive(0)
	var h http.Handler = live
	if !remote {
		h = loopbackOnly(h)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(out, "timeline server:", err)
		}
	}()
	fmt.Fprintf(out, "live timeline at http://%s/\n", ln.Addr())
	stop := func() {
		live.Close()
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
	}
	return live, stop, nil
}

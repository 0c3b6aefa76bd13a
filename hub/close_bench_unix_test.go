//go:build unix

package hub_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcpsup/mcpsup/hub"
	"github.com/mcpsup/mcpsup/internal/stdiotest"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/stdio"
	"github.com/mcpsup/mcpsup/supervisor"
)

// deadStore is a Store that never answers: every call ends with its ctx.
type deadStore struct{}

func (deadStore) Load(ctx context.Context, server string) (*supervisor.ResumeState, error) {
	return nil, &hub.StoreError{Op: "load", Server: server, Err: hub.ErrNotFound}
}
func (deadStore) Save(ctx context.Context, _ string, _ *supervisor.ResumeState) error {
	<-ctx.Done()
	return ctx.Err()
}
func (deadStore) Delete(ctx context.Context, _ string) error { <-ctx.Done(); return ctx.Err() }

// deadLeaser grants leases and renews them, then answers nothing more: a
// Redis that died while its leases were held.
type deadLeaser struct{ deadStore }

func (deadLeaser) Acquire(context.Context, string, time.Duration) (hub.Lease, error) {
	return deadLease{}, nil
}

type deadLease struct{}

func (deadLease) Token() uint64                       { return 1 }
func (deadLease) Renew(context.Context) (bool, error) { return false, nil }
func (deadLease) Save(ctx context.Context, _ *supervisor.ResumeState) error {
	<-ctx.Done()
	return ctx.Err()
}
func (deadLease) Delete(ctx context.Context) error  { <-ctx.Done(); return ctx.Err() }
func (deadLease) Release(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

// BenchmarkCloseSlowServers: the wall time of Close with 24 servers that
// each hold their stop as long as they may: a Store that never answers
// (StoreTimeout 1s), the same holding every server's lease, and stdio servers that ignore the end of their stdin
// (StopGrace 1s, then SIGTERM). The bound is one StoreTimeout, or one
// StopGrace, whatever the number of servers: about 1s per op for each.
func BenchmarkCloseSlowServers(b *testing.B) {
	ctx := b.Context()
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	bin, err := stdiotest.Build(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	for _, kind := range []string{"dead-store", "dead-leaser", "stdio-ignoring-eof"} {
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				cfg := hub.Config{Supervisor: supervisor.Config{
					Era:     supervisor.Era2025,
					Command: &stdio.Command{StopGrace: time.Second, KillGrace: time.Second},
					HTTP:    supervisor.HTTPConfig{HTTPClient: &http.Client{Transport: tr}},
				}, StoreTimeout: time.Second}
				switch kind {
				case "dead-store":
					cfg.Store = deadStore{}
				case "dead-leaser":
					cfg.Store = deadLeaser{}
				}
				h := hub.New(cfg)
				for i := range slowServers {
					sc := hub.ServerConfig{Name: fmt.Sprintf("s%02d", i), URL: srv.URL()}
					if kind == "stdio-ignoring-eof" {
						sc = hub.ServerConfig{Name: sc.Name, Command: bin, Args: []string{"-ignore-stdin-eof"}}
					}
					if err := h.Add(ctx, sc); err != nil {
						b.Fatal(err)
					}
				}
				if err := h.WaitReady(ctx, hub.All); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				_ = h.Close()
			}
		})
	}
}

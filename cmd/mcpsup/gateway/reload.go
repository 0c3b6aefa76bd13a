package gateway

import (
	"context"
	"errors"
	"reflect"

	"github.com/mcpsup/mcpsup/hub"
)

// Reload reads Config.ServersFile again and applies it (see Apply). A file
// that cannot be read changes nothing: the error is a *hub.ConfigError.
func (g *Gateway) Reload(ctx context.Context) error {
	f, err := hub.LoadServers(g.cfg.ServersFile)
	if err != nil {
		return err
	}
	return g.Apply(ctx, f)
}

// Apply makes the hub's servers those of f, as a diff: a server whose entry
// is unchanged keeps its supervisor and session; a removed one is removed
// (hub.EndSession: its session ended, its state deleted); a changed one is
// removed and added again (a new session on its new entry); a new one is
// added. The other servers are not touched. One Apply runs at a time. The
// error joins each server's that could not be removed or added; the rest
// were applied all the same.
func (g *Gateway) Apply(ctx context.Context, f *hub.ServersFile) error {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	want := make(map[string]hub.ServerConfig, len(f.Servers))
	for _, sc := range f.Servers {
		want[sc.Name] = sc
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrClosed
	}
	var remove []string
	var add []hub.ServerConfig
	for name, old := range g.applied {
		sc, ok := want[name]
		if !ok || !reflect.DeepEqual(old, sc) {
			remove = append(remove, name)
		}
	}
	for _, sc := range f.Servers {
		if old, ok := g.applied[sc.Name]; !ok || !reflect.DeepEqual(old, sc) {
			add = append(add, sc)
		}
	}
	g.mu.Unlock()

	var errs []error
	for _, name := range remove {
		err := g.hub.Remove(ctx, name, hub.EndSession)
		if err != nil && !errors.Is(err, hub.ErrUnknownServer) {
			errs = append(errs, err)
		}
		g.relay.forget(name)
		g.mu.Lock()
		delete(g.applied, name)
		delete(g.settled, name)
		g.mu.Unlock()
		g.log.Info("server removed", "server", name)
	}
	if len(add) > 0 || len(f.Warnings) > 0 {
		// Marked applied before Add, so that the first transition's
		// event (which may come before AddServers returns) counts.
		g.mu.Lock()
		for _, sc := range add {
			g.applied[sc.Name] = sc
		}
		g.mu.Unlock()
		if err := g.hub.AddServers(ctx, &hub.ServersFile{Servers: add, Warnings: f.Warnings}); err != nil {
			errs = append(errs, err)
		}
		in := map[string]bool{}
		for _, n := range g.hub.Names() {
			in[n] = true
		}
		g.mu.Lock()
		for _, sc := range add {
			if !in[sc.Name] {
				delete(g.applied, sc.Name)
				delete(g.settled, sc.Name)
			} else {
				g.log.Info("server added", "server", sc.Name)
			}
		}
		g.mu.Unlock()
	}
	g.kick()
	return errors.Join(errs...)
}

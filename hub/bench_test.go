package hub

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/probes"
	"github.com/mcpsup/mcpsup/supervisor"
)

// BenchmarkCatalogChange: a hub of servers × tools; each op changes one
// server's catalog and updates the merged view (and, for read, rebuilds the
// sorted list a host reads next). The update should be flat in servers and
// grow with the changed server's tools.
func BenchmarkCatalogChange(b *testing.B) {
	for _, size := range []struct{ servers, tools int }{{100, 10}, {1000, 10}, {1000, 100}} {
		for _, mode := range []string{"describe", "rename", "read"} {
			b.Run(fmt.Sprintf("servers=%d/tools=%d/%s", size.servers, size.tools, mode), func(b *testing.B) {
				h := New(Config{})
				defer h.Close()
				catalogs := func(server, version string) supervisor.Catalog {
					ts := make([]*mcp.Tool, size.tools)
					for i := range ts {
						name := "tool-" + strconv.Itoa(i)
						if mode == "rename" {
							name += "-" + version
						}
						ts[i] = &mcp.Tool{Name: name, Description: "version " + version, InputSchema: map[string]any{"type": "object"}}
					}
					return supervisor.Catalog{Offer: probes.Offer{Tools: ts}}
				}
				var changed *entry
				for s := range size.servers {
					e := &entry{name: "s" + strconv.Itoa(s)}
					h.updateCatalog(e, catalogs(e.name, "0"), false)
					if s == 7 {
						changed = e
					}
				}
				versions := [2]supervisor.Catalog{catalogs("s0", "a"), catalogs("s0", "b")}
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					h.updateCatalog(changed, versions[i%2], false)
					if mode == "read" {
						_ = h.Tools()
					}
				}
			})
		}
	}
}

// BenchmarkRouteDuringCatalogChange: server A's catalog (items × a
// description of desc bytes, every definition changed at each op) changes
// while a caller routes to server B's tool every 50µs; the metrics are the
// route's latency over the run (p50, p99, max ns). A route waits for the
// routing lock only: what the catalog change holds it for. The bounds are
// lifted so that the catalog is merged.
func BenchmarkRouteDuringCatalogChange(b *testing.B) {
	for _, size := range []struct{ items, desc int }{{1000, 64 << 10}, {10000, 16 << 10}} {
		b.Run(fmt.Sprintf("items=%d/desc=%dKiB", size.items, size.desc>>10), func(b *testing.B) {
			h := New(Config{MaxCatalogItems: math.MaxInt, MaxCatalogBytes: math.MaxInt64})
			eb := &entry{name: "b"}
			h.servers["b"] = eb // for route's look-up; not started
			defer func() { delete(h.servers, "b"); _ = h.Close() }()
			h.updateCatalog(eb, supervisor.Catalog{Offer: probes.Offer{Tools: []*mcp.Tool{{Name: "t"}}}}, false)
			ea := &entry{name: "a"}
			var versions [2]supervisor.Catalog
			for v := range versions {
				desc := strings.Repeat(string(rune('x'+v)), size.desc) // shared by the items: memory stays small
				ts := make([]*mcp.Tool, size.items)
				for i := range ts {
					ts[i] = &mcp.Tool{Name: "tool-" + strconv.Itoa(i), Description: desc, InputSchema: map[string]any{"type": "object"}}
				}
				versions[v] = supervisor.Catalog{Offer: probes.Offer{Tools: ts}}
			}
			h.updateCatalog(ea, versions[1], false)
			stop := make(chan struct{})
			lat := make([]time.Duration, 0, 1<<20)
			routed := make(chan struct{})
			go func() {
				defer close(routed)
				tick := time.NewTicker(50 * time.Microsecond)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					start := time.Now()
					e, id, ce := route(h, h.tools, "tools/call", "b__t")
					lat = append(lat, time.Since(start))
					if ce != nil || e != eb || id != "t" {
						panic("route to b__t failed")
					}
				}
			}()
			b.ResetTimer()
			for i := range b.N {
				h.updateCatalog(ea, versions[i%2], false)
			}
			b.StopTimer()
			close(stop)
			<-routed
			slices.Sort(lat)
			q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) }
			b.ReportMetric(q(0.5), "route-p50-ns")
			b.ReportMetric(q(0.99), "route-p99-ns")
			b.ReportMetric(float64(lat[len(lat)-1]), "route-max-ns")
		})
	}
}

// BenchmarkAddManyServers: one op adds n servers to an empty hub (one
// starts, the rest wait their turn: Config.MaxStarting 1, an address that
// refuses). Add checks the new server's namespace against every other's
// under the hub's lock: the op should grow as n log n, not n².
func BenchmarkAddManyServers(b *testing.B) {
	for _, n := range []int{1000, 8000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			ctx := b.Context()
			for range b.N {
				h := New(Config{MaxStarting: 1})
				for i := range n {
					if err := h.Add(ctx, ServerConfig{Name: "srv" + strconv.Itoa(i) + "x", URL: "http://127.0.0.1:1/mcp"}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				_ = h.Close()
				b.StartTimer()
			}
		})
	}
}

package hub

import (
	"fmt"
	"strconv"
	"testing"

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

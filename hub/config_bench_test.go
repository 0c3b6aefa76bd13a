package hub_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpsup/mcpsup/hub"
)

// repeatedKeysFile returns a servers file of nearly hub.MaxConfigBytes
// whose objects give names again and again, shaped by shape: every server
// name twice ("names-twice"), one server name throughout ("one-name"),
// every header name twice in one server ("headers-twice"), every
// top-level field twice ("fields-twice").
func repeatedKeysFile(shape string) []byte {
	var b bytes.Buffer
	room := func() bool { return b.Len() < hub.MaxConfigBytes-200 }
	switch shape {
	case "names-twice":
		b.WriteString(`{"mcpServers": {`)
		for i := 0; room(); i++ {
			fmt.Fprintf(&b, `"s%d": {}, "s%d": {}, `, i, i)
		}
		b.WriteString(`"last": {}}}`)
	case "one-name":
		b.WriteString(`{"mcpServers": {`)
		for room() {
			b.WriteString(`"a": {"url": "http://127.0.0.1:1/mcp"}, `)
		}
		b.WriteString(`"a": {}}}`)
	case "headers-twice":
		b.WriteString(`{"mcpServers": {"a": {"url": "http://127.0.0.1:1/mcp", "headers": {`)
		for i := 0; room(); i++ {
			fmt.Fprintf(&b, `"h%d": "v", "h%d": "v", `, i, i)
		}
		b.WriteString(`"last": "v"}}}}`)
	case "fields-twice":
		b.WriteString(`{"mcpServers": {}, `)
		for i := 0; room(); i++ {
			fmt.Fprintf(&b, `"f%d": 1, "f%d": 1, `, i, i)
		}
		b.WriteString(`"last": 1}`)
	}
	return b.Bytes()
}

var repeatedShapes = []string{"names-twice", "one-name", "headers-twice", "fields-twice"}

// BenchmarkLoadServers: reading and parsing a servers file of nearly the
// 4 MiB bound whose objects repeat their names, in each shape. The parse
// is linear in the file: every shape takes about as long as the others.
func BenchmarkLoadServers(b *testing.B) {
	for _, shape := range repeatedShapes {
		b.Run(shape, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "mcp.json")
			data := repeatedKeysFile(shape)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := hub.LoadServers(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

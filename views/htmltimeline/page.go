package htmltimeline

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"strings"

	"github.com/mcpsup/mcpsup/events"
)

// The page: page.html holds the markup with three placeholders, filled by
// writePage with page.css, page.js and the data.
var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

const (
	slotCSS    = "/*mcpsup:css*/"
	slotJS     = "/*mcpsup:js*/"
	slotEvents = "<!--mcpsup:events-->"
	slotLive   = "mcpsup:live"
)

// Write writes the page of evs to w: one self-contained HTML document (no
// external resource: inline CSS, SVG drawn by an inline script) holding evs
// in their JSON form, one line per event as [events.JSONLines] writes them.
// It fails on an event that cannot be marshalled (naming its server and
// sequence number) or on the first write error; on a marshal error it writes
// nothing.
func Write(w io.Writer, evs []events.Event) error {
	var data bytes.Buffer
	data.Grow(256 * len(evs)) // about an event's line
	for _, e := range evs {
		b, err := e.MarshalJSON()
		if err != nil {
			return fmt.Errorf("htmltimeline: event %d of %q: %w", e.Seq, e.Server, err)
		}
		data.Write(b)
		data.WriteByte('\n')
	}
	return writePage(w, data.Bytes(), "")
}

// writePage writes the page holding the JSON lines data. When live is not
// empty the page also listens for server-sent events at that URL path.
func writePage(w io.Writer, data []byte, live string) error {
	head, rest, _ := strings.Cut(pageHTML, slotCSS)
	mid, rest, _ := strings.Cut(rest, slotEvents)
	script, tail, _ := strings.Cut(rest, slotJS)
	mid = strings.Replace(mid, slotLive, htmlAttr(live), 1)
	ew := &errWriter{w: w}
	ew.write(head)
	ew.write(pageCSS)
	ew.write(mid)
	ew.writeBytes(scriptSafe(data))
	ew.write(script)
	ew.write(pageJS)
	ew.write(tail)
	return ew.err
}

// scriptSafe makes JSON lines safe inside a <script> element: "<" can only
// occur inside JSON strings, where "\u003c" means the same, so no "</script"
// or "<!--" can end or bend the element. (Go's encoder already writes
// "\u003c"; a host's own lines may not.)
func scriptSafe(data []byte) []byte {
	return bytes.ReplaceAll(data, []byte("<"), []byte(`\u003c`))
}

// htmlAttr escapes s for a double-quoted attribute value.
func htmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;").Replace(s)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (ew *errWriter) write(s string) {
	if ew.err == nil {
		_, ew.err = io.WriteString(ew.w, s)
	}
}

func (ew *errWriter) writeBytes(b []byte) {
	if ew.err == nil {
		_, ew.err = ew.w.Write(b)
	}
}

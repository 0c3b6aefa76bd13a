package htmltimeline

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"strings"

	"github.com/mcpsup/mcpsup/events"
)

// page.html holds the markup with slots writePage fills.
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

// Write writes the page of evs to w: one self-contained HTML document
// holding evs as [events.JSONLines] writes them. It fails on the first write
// error, or, writing nothing, on an event that cannot be marshalled.
func Write(w io.Writer, evs []events.Event) error {
	var data bytes.Buffer
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

// writePage writes the page holding the JSON lines data, listening for
// server-sent events at the URL path live unless it is empty. What fills a
// slot is never scanned for another.
func writePage(w io.Writer, data []byte, live string) error {
	_, err := strings.NewReplacer(slotCSS, pageCSS, slotJS, pageJS, slotLive, htmlAttr(live),
		slotEvents, string(scriptSafe(data))).WriteString(w, pageHTML)
	return err
}

// scriptSafe makes JSON lines safe inside a <script> element: "<" occurs
// only inside JSON strings, where "\u003c" means the same, so no "</script"
// or "<!--" can end or bend the element (a host's own lines may hold it).
func scriptSafe(data []byte) []byte {
	return bytes.ReplaceAll(data, []byte("<"), []byte(`\u003c`))
}

// htmlAttr escapes s for a double-quoted attribute value.
func htmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;").Replace(s)
}

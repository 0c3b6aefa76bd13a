package htmltimeline

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"strings"

	"github.com/mcpsup/mcpsup/events"
)

// The page: page.html holds the markup with placeholders, filled by
// writePage with page.css, page.js, the data and the live stream's path.
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

// writePage writes the page holding the JSON lines data. When live is not
// empty the page also listens for server-sent events at that URL path. Each
// slot occurs once in page.html; what fills one is never scanned for another.
func writePage(w io.Writer, data []byte, live string) error {
	_, err := strings.NewReplacer(slotCSS, pageCSS, slotJS, pageJS, slotLive, htmlAttr(live),
		slotEvents, string(scriptSafe(data))).WriteString(w, pageHTML)
	return err
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

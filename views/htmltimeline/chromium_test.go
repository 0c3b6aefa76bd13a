package htmltimeline

import (
	"bytes"
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
)

// The browser tests run headless Chromium (Debian package chromium). They
// skip when it is not installed, except under CI (the CI variable set),
// where they fail. Screenshots go to $MCPSUP_ARTIFACTS when set, else to the
// test's temporary directory.

// chromiumRunTimeout bounds one Chromium run, so a wedged browser fails the
// test instead of hanging it; it is no measure of speed.
const chromiumRunTimeout = 2 * time.Minute

func chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		tb.Fatal("chromium is not installed (CI is set, so the browser tests must run): apt-get install -y chromium")
	}
	tb.Skip("chromium is not installed; the browser tests need it: apt-get install -y chromium")
	return ""
}

// runChromium loads the page file headless with extra args and returns
// standard output.
func runChromium(tb testing.TB, bin, page string, args ...string) []byte {
	tb.Helper()
	return runChromiumURL(tb, bin, "file://"+page, args...)
}

// runChromiumURL loads url headless with extra args and returns standard
// output.
func runChromiumURL(tb testing.TB, bin, url string, args ...string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumRunTimeout)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + tb.TempDir()}, args...)
	all = append(all, url)
	cmd := exec.CommandContext(ctx, bin, all...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(tb, cmd.Run(), "chromium: %s", tail(stderr.Bytes(), 2000))
	return stdout.Bytes()
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// writePageFile writes the page of evs into dir and returns its path.
func writePageFile(tb testing.TB, dir string, evs []events.Event) string {
	tb.Helper()
	var b bytes.Buffer
	require.NoError(tb, Write(&b, evs))
	path := filepath.Join(dir, "timeline.html")
	require.NoError(tb, os.WriteFile(path, b.Bytes(), 0o600))
	return path
}

// dumpDOM returns the page's DOM after its scripts ran.
func dumpDOM(tb testing.TB, bin, page string) string {
	tb.Helper()
	return string(runChromium(tb, bin, page, "--dump-dom"))
}

// screenshot saves a PNG of the page as name in the artifacts directory and
// returns its path.
func screenshot(tb testing.TB, bin, page, name string) string {
	tb.Helper()
	dir := os.Getenv("MCPSUP_ARTIFACTS")
	if dir == "" {
		dir = tb.TempDir()
	}
	require.NoError(tb, os.MkdirAll(dir, 0o755))
	path, err := filepath.Abs(filepath.Join(dir, name))
	require.NoError(tb, err)
	runChromium(tb, bin, page, "--screenshot="+path, "--window-size=1400,900", "--hide-scrollbars")
	tb.Logf("screenshot: %s", path)
	return path
}

// element is one start tag of the dumped DOM.
type element struct {
	tag   string
	attrs map[string]string
}

var (
	startTag = regexp.MustCompile(`<([a-zA-Z]+)((?:\s+[^\s=>]+="[^"]*")*)\s*/?>`)
	attrRe   = regexp.MustCompile(`([^\s=>]+)="([^"]*)"`)
)

// elements returns the start tags of dom, in document order, whose class
// attribute is class (exactly) and that carry attribute has.
func elements(dom, class, has string) []element {
	var out []element
	for _, m := range startTag.FindAllStringSubmatch(dom, -1) {
		e := element{tag: m[1], attrs: map[string]string{}}
		for _, a := range attrRe.FindAllStringSubmatch(m[2], -1) {
			e.attrs[a[1]] = html.UnescapeString(a[2])
		}
		if _, ok := e.attrs[has]; ok && e.attrs["class"] == class {
			out = append(out, e)
		}
	}
	return out
}

func (e element) int(tb testing.TB, name string) int {
	tb.Helper()
	n, err := strconv.Atoi(e.attrs[name])
	require.NoError(tb, err, "attribute %s of %v", name, e)
	return n
}

// byLane groups elements by their data-lane attribute.
func byLane(tb testing.TB, es []element) map[int][]element {
	out := map[int][]element{}
	for _, e := range es {
		out[e.int(tb, "data-lane")] = append(out[e.int(tb, "data-lane")], e)
	}
	return out
}

// dumpWhenDone serves page over HTTP (its /events path from events, when not
// nil) with script inserted before </body>, holding the page's last bytes
// back until the script requests "done", and returns the DOM Chromium
// dumps. Chromium dumps at the load event, which thus comes after whatever
// the script waits for (frames drawn, server-sent events received), with no
// timing guess.
func dumpWhenDone(tb testing.TB, bin, page, script string, events http.Handler) string {
	tb.Helper()
	head, tail, ok := strings.Cut(page, "</body>")
	require.True(tb, ok, "the page has a body")
	done := make(chan struct{}, 1)
	mux := http.NewServeMux()
	if events != nil {
		mux.Handle("/events", events)
	}
	mux.HandleFunc("/done", func(http.ResponseWriter, *http.Request) {
		select {
		case done <- struct{}{}:
		default:
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, head+script)
		_ = http.NewResponseController(w).Flush()
		select {
		case <-done:
		case <-r.Context().Done():
		case <-time.After(chromiumRunTimeout / 2): // then the caller's assertions fail
		}
		_, _ = io.WriteString(w, "</body>"+tail)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	return string(runChromiumURL(tb, bin, srv.URL+"/", "--dump-dom"))
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testdata is the views' recorded stream and its golden outputs.
var testdata = filepath.Join("..", "..", "views", "testdata")

var recording = filepath.Join(testdata, "recorded.jsonl")

func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestTimelineFromFileMatchesGolden(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(testdata, "recorded.timeline.txt"))
	require.NoError(t, err)
	code, out, errOut := runCmd(t, "", recording)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, string(want), out)
}

func TestMermaidFromStdin(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(testdata, "recorded.mmd"))
	require.NoError(t, err)
	in, err := os.ReadFile(recording)
	require.NoError(t, err)
	for _, args := range [][]string{{"-mermaid"}, {"-mermaid", "-"}} {
		code, out, errOut := runCmd(t, string(in), args...)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, string(want), out)
	}
}

func TestServerFilter(t *testing.T) {
	code, out, _ := runCmd(t, "", "-server", "s2-stale-session", recording)
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(out, "== s2-stale-session: 7 events"))
	require.NotContains(t, out, "s1-blind-resume")

	code, _, errOut := runCmd(t, "", "-server", "nope", recording)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `no events of server "nope"`)
}

func TestErrors(t *testing.T) {
	code, out, errOut := runCmd(t, "{\"v\":1}\n{\"v\":7}\n")
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "stdin: events: line 2:")
	require.Contains(t, errOut, "unsupported JSON version")

	code, _, errOut = runCmd(t, "", filepath.Join(t.TempDir(), "missing.jsonl"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "missing.jsonl")

	code, _, errOut = runCmd(t, "", "a", "b")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "usage:")

	code, _, _ = runCmd(t, "", "-bogus")
	require.Equal(t, 2, code)

	code, _, errOut = runCmd(t, "", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "-mermaid")
}

func TestHTMLPage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "timeline.html")
	code, stdout, errOut := runCmd(t, "", "-html", out, "-server", "s2-stale-session", recording)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, stdout)
	page, err := os.ReadFile(out)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(page), "<!DOCTYPE html>"))
	require.Contains(t, string(page), `"server":"s2-stale-session"`)
	require.NotContains(t, string(page), `"server":"s1-blind-resume"`, "-server applies to the page too")

	code, _, errOut = runCmd(t, "", "-html", out, "-mermaid", recording)
	require.Equal(t, 2, code, "-html and -mermaid are exclusive")
	require.Contains(t, errOut, "usage:")

	code, _, errOut = runCmd(t, "", "-html", filepath.Join(t.TempDir(), "no", "such", "dir.html"), recording)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "dir.html")
}

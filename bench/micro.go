package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// MicroResult is one line of `go test -bench` output.
type MicroResult struct {
	Package     string
	Name        string
	NsPerOp     float64
	BytesPerOp  float64
	AllocsPerOp float64
	// Metrics are the benchmark's own (b.ReportMetric), by unit; nil when
	// it reports none.
	Metrics map[string]float64
}

// MicroPackages are the pure cores whose benchmarks figure 6 runs.
var MicroPackages = []string{"./fsm", "./classify", "./events"}

// HTMLPackage is the HTML timeline, whose benchmarks figure 7 runs.
const HTMLPackage = "./views/htmltimeline"

var (
	benchLine  = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)
	benchValue = regexp.MustCompile(`([\d.]+) (\S+)`)
)

// Micro runs the existing benchmarks of MicroPackages with `go test -bench`
// in the module at dir, benchtime each, and parses their results.
func Micro(ctx context.Context, dir, benchtime string) ([]MicroResult, error) {
	var out []MicroResult
	for _, pkg := range MicroPackages {
		res, err := microRun(ctx, dir, pkg, ".", benchtime)
		out = append(out, res...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// HTMLTimeline runs the benchmarks of HTMLPackage (the page of 10,000
// events written, its model built, and loaded in headless Chromium, which
// must be installed) with benchtime each.
func HTMLTimeline(ctx context.Context, dir, benchtime string) ([]MicroResult, error) {
	return microRun(ctx, dir, HTMLPackage, ".", benchtime)
}

// microRun runs the benchmarks of pkg matching pattern and parses them.
func microRun(ctx context.Context, dir, pkg, pattern, benchtime string) ([]MicroResult, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", pattern, "-benchmem", "-benchtime", benchtime, "-count", "1", pkg)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go test -bench %s: %w: %s%s", pkg, err, shorten(stdout.String(), 300), shorten(stderr.String(), 300))
	}
	return parseBench(strings.TrimPrefix(pkg, "./"), stdout.String()), nil
}

func parseBench(pkg, text string) []MicroResult {
	var out []MicroResult
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		r := MicroResult{Package: pkg, Name: m[1]}
		hasNs := false
		for _, v := range benchValue.FindAllStringSubmatch(m[2], -1) {
			f, _ := strconv.ParseFloat(v[1], 64)
			switch v[2] {
			case "ns/op":
				r.NsPerOp, hasNs = f, true
			case "B/op":
				r.BytesPerOp = f
			case "allocs/op":
				r.AllocsPerOp = f
			default:
				if r.Metrics == nil {
					r.Metrics = map[string]float64{}
				}
				r.Metrics[v[2]] = f
			}
		}
		if hasNs {
			out = append(out, r)
		}
	}
	return out
}

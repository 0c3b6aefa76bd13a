package bench_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpsup/mcpsup/bench"
)

// A report renders as Markdown that starts with the command regenerating it.
func ExampleReport_Render() {
	r := &bench.Report{Machine: bench.ThisMachine(time.Now())}
	var b strings.Builder
	if err := r.Render(&b); err != nil {
		panic(err)
	}
	lines := strings.Split(b.String(), "\n")
	fmt.Println(lines[0])
	fmt.Println(lines[2])
	// Output:
	// # mcpsup benchmarks
	// Regenerate with `go run ./bench/cmd/report` from the module root (a few minutes; it rewrites this file).
}

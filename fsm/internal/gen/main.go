// Command gen writes docs/statechart.md from the fsm transition table.
//
//	go run ./internal/gen -o ../docs/statechart.md   (run from fsm/, or via go generate ./...)
package main

import (
	"flag"
	"log"
	"os"

	"github.com/mcpsup/mcpsup/fsm"
)

func main() {
	out := flag.String("o", "statechart.md", "output file")
	flag.Parse()
	if err := os.WriteFile(*out, fsm.Statechart(), 0o644); err != nil {
		log.Fatal(err)
	}
}

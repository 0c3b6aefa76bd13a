// Package submodules holds no code: its test runs the tests of the Go
// modules nested in this repository (redisstore/, cmd/mcpsup/), which `go test ./...`
// at the root does not reach on its own (a pattern never crosses into
// another module, with or without a go.work), so the README's one test
// command covers every module.
package submodules

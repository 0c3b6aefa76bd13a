//go:build race

package submodules_test

func init() { raceEnabled = true }

package submodules_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// raceEnabled: this test was built with -race, and so runs the nested
// modules' tests with it.
var raceEnabled bool

// nested are the repository's other Go modules, from the repository root.
var nested = []string{"redisstore", "cmd/mcpsup"}

// TestNestedModules runs `go test ./...` in each nested module (with -race
// when this test has it). Its output is shown only on failure.
//
// go test caches a passing result by the files a test opens and the
// variables it reads: the walk below stats every file of the module, so a
// change there (or to CI, which its tests read) runs it again.
func TestNestedModules(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the nested modules' tests are not run")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to test the nested modules: %v", err)
	}
	_ = os.Getenv("CI")
	for _, mod := range nested {
		t.Run(mod, func(t *testing.T) {
			dir := filepath.Join("..", "..", mod)
			err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() {
					_, err = os.Stat(path)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"test", "-count=1"}
			if raceEnabled {
				args = append(args, "-race")
			}
			cmd := exec.Command(goTool, append(args, "./...")...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go %v in %s: %v\n%s", args, mod, err, out)
			}
			t.Logf("go %v in %s:\n%s", args, mod, out)
		})
	}
}

//go:build !unix

package hub

import "os"

// openStateFile opens a state file for reading; where opening cannot be
// made non-blocking, a path that is not a regular file is refused before it
// is opened.
func openStateFile(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := notRegular(path, fi); err != nil {
		return nil, err
	}
	return os.Open(path)
}

//go:build !linux

package stdiotest

// becomeSubreaper reports false: only Linux has child subreapers.
func becomeSubreaper() bool { return false }

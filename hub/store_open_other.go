//go:build !unix

package hub

// openNonblock: opening a file path here does not wait for a writer.
const openNonblock = 0

package classify

import (
	"fmt"
	"reflect"
)

// item is one error value waiting to be visited, at its wrapping depth.
type item struct {
	err   error
	depth int
}

// collect walks the error tree from root depth-first, iteratively, visiting
// each reference-typed error value once (cycles, failure story S3) and at most
// MaxNodes values no deeper than MaxDepth.
func (f *facts) collect(root error) {
	f.detail = safeText(root)

	stack := []item{{root, 0}}
	seen := map[identity]bool{}
	for n := 0; len(stack) > 0 && n < MaxNodes; n++ {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id, ok := identify(it.err); ok {
			if seen[id] {
				continue
			}
			seen[id] = true
		}
		f.inspect(it.err)
		if it.depth < MaxDepth {
			stack = pushChildren(stack, it.err, it.depth+1)
		}
	}
}

// identity is a visited-set key: a dynamic type and an address.
type identity struct {
	t reflect.Type
	p uintptr
}

// identify returns the identity of errors that can take part in a cycle:
// reference kinds. Value errors may not be comparable, so they get none;
// MaxDepth and MaxNodes stop a chain of new values.
func identify(err error) (identity, bool) {
	v := reflect.ValueOf(err)
	switch v.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Chan, reflect.Func, reflect.Slice:
		return identity{v.Type(), v.Pointer()}, true
	}
	return identity{}, false
}

// pushChildren pushes what err wraps onto stack, the first child on top, and
// recovers from a panicking Unwrap (keeping what was pushed before it).
func pushChildren(stack []item, err error, depth int) (out []item) {
	out = stack
	defer func() { _ = recover() }()
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		kids := u.Unwrap()
		for i := len(kids) - 1; i >= 0; i-- {
			if kids[i] != nil {
				out = append(out, item{kids[i], depth})
			}
		}
	case interface{ Unwrap() error }:
		if k := u.Unwrap(); k != nil {
			out = append(out, item{k, depth})
		}
	}
	return out
}

// safeText returns err.Error() cut to MaxScan bytes, or a placeholder when
// Error panics.
func safeText(err error) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("%T (Error panicked)", err)
		}
	}()
	return cut(err.Error(), MaxScan)
}

// cut returns s cut to at most n bytes, not splitting a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

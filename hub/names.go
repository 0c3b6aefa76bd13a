package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpsup/mcpsup/msgcheck"
)

// Naming makes the name a model sees for one item (a tool or prompt name,
// a resource's name or else URI) of one server. A name not valid for model
// APIs (ValidName) is cut and given '_' and a 10-digit hex hash of the
// server and item names, stable across runs. Naming(server, "") is the
// server's namespace, the prefix of every name of its items (bytes outside
// the pattern as '_'); no namespace may begin another's (ErrServerName).
// Two items asking for one name: see Collision.
type Naming func(server, item string) string

// DefaultSeparator joins the server and item names of DefaultNaming.
const DefaultSeparator = "__"

// DefaultNaming is `server__item`.
func DefaultNaming(server, item string) string { return server + DefaultSeparator + item }

// Separated returns the Naming `server<sep>item`.
func Separated(sep string) Naming {
	return func(server, item string) string { return server + sep + item }
}

// MaxNameLen is the longest qualified name: the bound of the tool name
// pattern `^[a-zA-Z0-9_-]{1,64}$` of OpenAI's and Anthropic's tool APIs.
const MaxNameLen = 64

// hashLen is the number of hex digits of the short hash (40 bits): two
// different (server, item) pairs share one with a chance of about 2^-40.
const hashLen = 10

// ValidName reports whether name matches `^[a-zA-Z0-9_-]{1,64}$`, the
// pattern model APIs require of tool names.
func ValidName(name string) bool {
	return len(name) > 0 && len(name) <= MaxNameLen &&
		!strings.ContainsFunc(name, func(r rune) bool { return r >= utf8.RuneSelf || !nameByte(byte(r)) })
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// MaxNamespaceLen is the longest namespace (Naming(server, "")): what a
// shortened name keeps before '_' and the hash.
const MaxNamespaceLen = MaxNameLen - 1 - hashLen

// namespace returns the prefix of every qualified name of server, its
// bytes outside the name pattern as '_'; the error wraps ErrServerName.
func namespace(naming Naming, server string) (string, error) {
	p := sanitized(naming(server, ""))
	switch {
	case len(p) == 0:
		return "", fmt.Errorf("%w: its namespace (the naming of an empty item) is empty", ErrServerName)
	case len(p) > MaxNamespaceLen:
		return "", fmt.Errorf("%w: its namespace %q is longer than %d bytes", ErrServerName, msgcheck.CutText(p, 64), MaxNamespaceLen)
	}
	return p, nil
}

// sanitized is s, its bytes outside the name pattern as '_'.
func sanitized(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

// takenNames are the server names no Add may take (in the hub, being added
// or removed) with their namespaces, guarded by the hub's mutex. No taken
// namespace begins another, so one that begins a new one, or that the new
// one begins, is its neighbour in sorted order.
type takenNames struct {
	space  map[string]string // server -> its namespace
	owner  map[string]string // namespace -> its server
	sorted []string          // the namespaces, sorted
}

// take reserves server with its namespace ns, or returns ErrDuplicate or
// an error wrapping ErrServerName naming the other server.
func (t *takenNames) take(server, ns string) error {
	if _, ok := t.space[server]; ok {
		return ErrDuplicate
	}
	i, _ := slices.BinarySearch(t.sorted, ns)
	for _, o := range t.sorted[max(i-1, 0):min(i+1, len(t.sorted))] {
		if strings.HasPrefix(ns, o) || strings.HasPrefix(o, ns) {
			return fmt.Errorf("%w: its names begin %q, server %q's begin %q: one could take the other's", ErrServerName, ns, t.owner[o], o)
		}
	}
	if t.space == nil {
		t.space, t.owner = map[string]string{}, map[string]string{}
	}
	t.space[server], t.owner[ns] = ns, server
	t.sorted = slices.Insert(t.sorted, i, ns)
	return nil
}

func (t *takenNames) free(server string) {
	ns, ok := t.space[server]
	if !ok {
		return
	}
	delete(t.space, server)
	delete(t.owner, ns)
	if i, found := slices.BinarySearch(t.sorted, ns); found {
		t.sorted = slices.Delete(t.sorted, i, i+1)
	}
}

// qualify returns the qualified name of item of server (see Naming).
func qualify(naming Naming, server, item string) string {
	q := naming(server, item)
	if p := naming(server, ""); !strings.HasPrefix(q, p) {
		q = p + item
	}
	if ValidName(q) {
		return q
	}
	return hashed(q, server, item)
}

// hashed is q sanitized, cut to fit '_' and the short hash of (server,
// item) in MaxNameLen.
func hashed(q, server, item string) string {
	return sanitized(q[:min(len(q), MaxNamespaceLen)]) + "_" + shortHash(server, item)
}

// shortHash is hashLen hex digits of SHA-256(server, 0, item).
func shortHash(server, item string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + item))
	return hex.EncodeToString(sum[:hashLen/2])
}

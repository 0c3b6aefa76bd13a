package probes

import (
	"errors"
	"fmt"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/msgcheck"
)

// ListError is the error of a discovery that failed: a strict `tools/list`
// failure, or an unauthorized answer or the caller's cancellation on any
// list; the state machine reads its Verdict (Err classified with the
// caller's context).
type ListError struct {
	List    List             // the list whose failure decided the outcome
	Verdict classify.Verdict // Err classified
	Err     error            // the list's error, as the [Lister] returned it
}

// Error names the list and the verdict, e.g.
// `probes: tools/list: unauthorized (HTTP 401, tools/list): <Err>`.
func (e *ListError) Error() string {
	return fmt.Sprintf("probes: %s: %s: %v", e.List.Method(), e.Verdict, e.Err)
}

// Unwrap returns Err.
func (e *ListError) Unwrap() error { return e.Err }

// Sentinels of [PaginationError], for errors.Is. Each wraps
// [classify.ErrProtocol].
var (
	// ErrPageLimit: a cursor still came after [Options.MaxPages] pages.
	ErrPageLimit error = &boundError{"page limit reached"}
	// ErrItemLimit: the list returned more than [Options.MaxItems] items.
	ErrItemLimit error = &boundError{"item limit reached"}
	// ErrCursorRepeated: the server repeated a cursor of the same list.
	ErrCursorRepeated error = &boundError{"cursor repeated"}
)

// boundError is a pagination bound the server went past; it unwraps to
// [classify.ErrProtocol].
type boundError struct{ text string }

func (e *boundError) Error() string { return e.text }
func (e *boundError) Unwrap() error { return classify.ErrProtocol }

// PaginationError is a list stopped because its pagination did not end
// within its bounds: the server broke them, so it classifies as protocol,
// as one page over [Options.MaxItems] does (refused by the transport).
type PaginationError struct {
	List         List
	Pages, Items int    // read before stopping
	Cursor       string // the last cursor the server returned
	Err          error  // [ErrPageLimit], [ErrItemLimit] or [ErrCursorRepeated]
}

// Error names the list and the limit, e.g.
// `tools/list: page limit reached after 100 pages (2000 items)`.
func (e *PaginationError) Error() string {
	s := fmt.Sprintf("%s: %v after %d pages (%d items)", e.List.Method(), e.Err, e.Pages, e.Items)
	if errors.Is(e.Err, ErrCursorRepeated) {
		s += fmt.Sprintf(": cursor %q", msgcheck.CutText(e.Cursor, 64))
	}
	return s
}

// Unwrap returns Err.
func (e *PaginationError) Unwrap() error { return e.Err }

package probes

import (
	"context"
	"crypto/sha256"
)

// pageFunc lists one page.
type pageFunc[T any] func(ctx context.Context, cursor string) ([]T, string, error)

// paginate follows cursors until the last page, within o's page and item
// limits, refusing a cursor seen before; err is the page's error or a
// *PaginationError. Cursors are remembered by their SHA-256: a server's may
// be as long as an answer.
func paginate[T any](ctx context.Context, l List, page pageFunc[T], o Options) (items []T, pages int, err error) {
	seen := make(map[[sha256.Size]byte]struct{})
	cursor := ""
	for {
		got, next, err := page(ctx, cursor)
		if err != nil {
			return items, pages, err
		}
		pages++
		items = append(items, got...)
		var stop error
		var key [sha256.Size]byte
		switch {
		case len(items) > o.MaxItems:
			stop = ErrItemLimit
		case next == "":
			return items, pages, nil
		case pages >= o.MaxPages:
			stop = ErrPageLimit
		default:
			key = sha256.Sum256([]byte(next))
			if _, dup := seen[key]; dup {
				stop = ErrCursorRepeated
			}
		}
		if stop != nil {
			return items, pages, &PaginationError{List: l, Pages: pages, Items: len(items), Cursor: next, Err: stop}
		}
		seen[key] = struct{}{}
		cursor = next
	}
}

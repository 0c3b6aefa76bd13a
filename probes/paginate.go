package probes

import "context"

// pageFunc lists one page.
type pageFunc[T any] func(ctx context.Context, cursor string) ([]T, string, error)

// paginate follows cursors until the last page, within o's page and item
// limits, refusing a cursor seen before. err is either the page's error
// (remote) or a *PaginationError (local).
func paginate[T any](ctx context.Context, l List, page pageFunc[T], o Options) (items []T, pages int, local bool, err error) {
	seen := make(map[string]struct{})
	cursor := ""
	for {
		got, next, err := page(ctx, cursor)
		if err != nil {
			return items, pages, false, err
		}
		pages++
		items = append(items, got...)
		stop := func(sentinel error) ([]T, int, bool, error) {
			return items, pages, true, &PaginationError{List: l, Pages: pages, Items: len(items), Cursor: next, Err: sentinel}
		}
		switch {
		case len(items) > o.MaxItems:
			return stop(ErrItemLimit)
		case next == "":
			return items, pages, false, nil
		case pages >= o.MaxPages:
			return stop(ErrPageLimit)
		}
		if _, dup := seen[next]; dup {
			return stop(ErrCursorRepeated)
		}
		seen[next] = struct{}{}
		cursor = next
	}
}

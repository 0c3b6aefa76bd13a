package probes

import (
	"context"
	"crypto/sha256"
	"log/slog"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type role uint8 // how one list takes part in a discovery

const (
	skip        role = iota // not declared: not sent
	strict                  // tools/list: its failure fails the discovery
	speculative             // blind side list: failure is degraded
	sideList                // declared side list: failure is degraded
)

// ProbeBlind discovers the catalog of a resumed session whose capabilities
// are unknown: the four lists concurrently, `tools/list` strict. It returns
// once every list has settled. The error is nil or a [*ListError]; on error
// the Catalog's items are not the server's catalog, its Report is filled.
// Safe for concurrent use if l is.
func ProbeBlind(ctx context.Context, l Lister, opts Options) (Catalog, error) {
	return discover(ctx, l, Blind, [numLists]role{strict, speculative, speculative, speculative}, opts)
}

// ListDeclared discovers the catalog of a session whose capabilities caps
// (nil: none) are known: `resources/list` and `resources/templates/list` for
// Resources, `prompts/list` for Prompts, the rest absent, not declared.
// `tools/list` is always tried (servers serve tools they do not declare):
// strict when declared, else speculative. Errors and the Report are as for
// [ProbeBlind].
func ListDeclared(ctx context.Context, l Lister, caps *mcp.ServerCapabilities, opts Options) (Catalog, error) {
	roles := [numLists]role{Tools: speculative}
	if caps != nil {
		if caps.Tools != nil {
			roles[Tools] = strict
		}
		if caps.Resources != nil {
			roles[Resources] = sideList
			roles[ResourceTemplates] = sideList
		}
		if caps.Prompts != nil {
			roles[Prompts] = sideList
		}
	}
	return discover(ctx, l, Declared, roles, opts)
}

// ListOnly lists exactly the lists named, as [ListDeclared] lists declared
// ones (a re-list after list_changed); the others are absent, not declared.
func ListOnly(ctx context.Context, l Lister, lists []List, opts Options) (Catalog, error) {
	var roles [numLists]role
	for _, list := range lists {
		switch {
		case list == Tools:
			roles[list] = strict
		case list < numLists:
			roles[list] = sideList
		}
	}
	return discover(ctx, l, Declared, roles, opts)
}

// outcome is one list's result, classified.
type outcome struct {
	list         List
	pages, count int
	err          error
	verdict      classify.Verdict
}

func discover(ctx context.Context, l Lister, mode Mode, roles [numLists]role, opts Options) (Catalog, error) {
	o := opts.withDefaults()
	cat := Catalog{Report: Report{Mode: mode}}
	results := make(chan outcome, numLists)
	group, cancel := context.WithCancel(ctx)
	defer cancel()
	running := 0
	for list, r := range roles {
		rep := &cat.Report.Lists[list]
		rep.List, rep.Strict = List(list), r == strict
		if r == skip {
			rep.Status, rep.Reason = Absent, NotDeclared
			continue
		}
		running++
		go func() { results <- listOne(ctx, group, l, List(list), &cat.Offer, o) }()
	}

	var decided *ListError
	for range running {
		out := <-results
		rep := &cat.Report.Lists[out.list]
		rep.Pages, rep.Items, rep.Verdict = out.pages, out.count, out.verdict
		switch {
		case out.err == nil:
			rep.Status, rep.Reason = Present, Listed
		case decided != nil && stops(decided.Verdict):
			rep.Status, rep.Reason = Degraded, Abandoned
		case propagates(ctx, roles[out.list], out.verdict) && (decided == nil || stops(out.verdict)):
			rep.Status, rep.Reason = Failed, ListFailed
			decided = &ListError{List: out.list, Verdict: out.verdict, Err: out.err}
			if stops(out.verdict) {
				cancel() // else the others settle: a retry lists only the rest
			}
		case out.verdict.Class == classify.MethodNotFound:
			rep.Status, rep.Reason = Absent, MethodNotFound
			if mode == Declared && roles[out.list] != speculative {
				rep.Warning = "declared in the server's capabilities but " + out.list.Method() + " answered -32601 (Method not found)"
			}
		default:
			rep.Status, rep.Reason = Degraded, ListFailed
		}
		logReport(ctx, o.Logger, *rep)
	}
	if decided != nil {
		return cat, decided
	}
	return cat, nil
}

// stops reports whether a deciding failure ends the other lists at once:
// unauthorized (no list can succeed) or the caller's cancellation.
func stops(v classify.Verdict) bool {
	return v.Class == classify.Unauthorized || v.Class == classify.Canceled
}

// propagates reports whether a list's failure decides the discovery:
// unauthorized and the caller's cancellation from any list, and any failure
// but -32601 of the strict list.
func propagates(ctx context.Context, r role, v classify.Verdict) bool {
	switch {
	case v.Class == classify.Unauthorized:
		return true
	case v.Class == classify.Canceled && ctx.Err() != nil: // the caller's doing
		return true
	case v.Class == classify.MethodNotFound:
		return false
	}
	return r == strict
}

// listOne lists every page of one list into its field of dst within the
// probe timeout, then classifies its error against the caller's context.
func listOne(caller, group context.Context, l Lister, list List, dst *Offer, o Options) outcome {
	ctx, cancel := group, context.CancelFunc(func() {})
	if o.ProbeTimeout > 0 {
		ctx, cancel = context.WithTimeoutCause(group, o.ProbeTimeout, classify.ErrDeadline) // ours: timeout
	}
	defer cancel()

	out := outcome{list: list}
	switch list {
	case Tools:
		out.pages, out.count, out.err = walk(ctx, list, l.ListTools, &dst.Tools, o)
	case Resources:
		out.pages, out.count, out.err = walk(ctx, list, l.ListResources, &dst.Resources, o)
	case Prompts:
		out.pages, out.count, out.err = walk(ctx, list, l.ListPrompts, &dst.Prompts, o)
	case ResourceTemplates:
		out.pages, out.count, out.err = walk(ctx, list, l.ListResourceTemplates, &dst.ResourceTemplates, o)
	}
	if out.err != nil {
		out.verdict = classify.Classify(caller, out.err)
	}
	return out
}

// walk follows one list's cursors from its first page to its last, within
// o's page and item limits, refusing a cursor seen before (remembered by its
// SHA-256: a server's may be as long as an answer); err is a page's error or
// a *PaginationError. The items go to dst only when the list answered whole
// (each list writes its own field).
func walk[T any](ctx context.Context, list List, page func(context.Context, string) ([]T, string, error), dst *[]T, o Options) (pages, count int, err error) {
	seen := make(map[[sha256.Size]byte]bool)
	var items []T
	for cursor := ""; ; {
		got, next, err := page(ctx, cursor)
		if err != nil {
			return pages, len(items), err
		}
		pages++
		items = append(items, got...)
		var stop error
		switch key := sha256.Sum256([]byte(next)); {
		case len(items) > o.MaxItems:
			stop = ErrItemLimit
		case next == "":
			*dst = items
			return pages, len(items), nil
		case pages >= o.MaxPages:
			stop = ErrPageLimit
		case seen[key]:
			stop = ErrCursorRepeated
		default:
			seen[key], cursor = true, next
			continue
		}
		return pages, len(items), &PaginationError{List: list, Pages: pages, Items: len(items), Cursor: next, Err: stop}
	}
}

func logReport(ctx context.Context, log *slog.Logger, r ListReport) {
	level := slog.LevelDebug
	if r.Status == Degraded || r.Status == Failed || r.Warning != "" {
		level = slog.LevelWarn
	}
	attrs := []any{"list", r.List.Method(), "status", r.Status.String(), "reason", r.Reason.String(), "items", r.Items, "pages", r.Pages}
	if r.Verdict.Class != classify.None {
		attrs = append(attrs, "verdict", r.Verdict.String())
	}
	if r.Warning != "" {
		attrs = append(attrs, "warning", r.Warning)
	}
	log.Log(context.WithoutCancel(ctx), level, "probes: list settled", attrs...)
}

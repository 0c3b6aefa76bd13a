package supervisor

import (
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/probes"
)

// Catalog is what the server offered as last discovered (probes.Offer: the
// tools, resources, prompts and resource templates), and which session it
// came from. How each list settled is the probe-report event's. Its slices
// are shared and must not be modified.
type Catalog struct {
	probes.Offer
	// Generation is the session generation the catalog was listed on.
	Generation uint64
	// Stale reports that the supervisor is not ready (recovering, failed or
	// closed): the catalog is the last knowledge, not the live session's.
	Stale bool
}

// CatalogDiff is the change of the tool list between two catalogs.
type CatalogDiff struct {
	Added, Removed, Changed []string
}

// Empty reports whether nothing changed.
func (d CatalogDiff) Empty() bool {
	return len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Changed) == 0
}

// diffTools compares tool lists by name and by their JSON form.
func diffTools(old, cur []*mcp.Tool) CatalogDiff {
	before := make(map[string][]byte, len(old))
	for _, t := range old {
		before[t.Name] = toolJSON(t)
	}
	var d CatalogDiff
	seen := make(map[string]bool, len(cur))
	for _, t := range cur {
		seen[t.Name] = true
		prev, ok := before[t.Name]
		switch {
		case !ok:
			d.Added = append(d.Added, t.Name)
		case string(prev) != string(toolJSON(t)):
			d.Changed = append(d.Changed, t.Name)
		}
	}
	for _, t := range old {
		if !seen[t.Name] {
			d.Removed = append(d.Removed, t.Name)
		}
	}
	slices.Sort(d.Added)
	slices.Sort(d.Removed)
	slices.Sort(d.Changed)
	return d
}

func toolJSON(t *mcp.Tool) []byte {
	b, err := json.Marshal(t)
	if err != nil {
		return nil
	}
	return b
}

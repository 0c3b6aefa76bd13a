package supervisor

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/probes"
)

// capabilitiesOf returns what the session's server declared, nil when
// unknown (a blind resume).
func capabilitiesOf(sess session) *mcp.ServerCapabilities {
	if ir := sess.InitializeResult(); ir != nil {
		if ir.Capabilities == nil {
			return &mcp.ServerCapabilities{}
		}
		return ir.Capabilities
	}
	return nil
}

// catalogOf returns the catalog discovered on the session of gen.
func catalogOf(c probes.Catalog, gen uint64) *Catalog {
	return &Catalog{Offer: c.Offer, Generation: gen}
}

// listOutcomes converts a discovery report for events.
func listOutcomes(r probes.Report) []events.ListOutcome {
	out := make([]events.ListOutcome, 0, len(r.Lists))
	for _, l := range r.Lists {
		out = append(out, events.ListOutcome{
			List:    l.List.String(),
			Status:  l.Status.String(),
			Items:   l.Items,
			Verdict: l.Verdict,
			Warning: l.Warning,
		})
	}
	return out
}

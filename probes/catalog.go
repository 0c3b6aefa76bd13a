package probes

import (
	"fmt"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Offer is what a server offers, by list; a list that is absent, degraded or
// failed holds no items. The supervisor's published catalog embeds it.
type Offer struct {
	Tools             []*mcp.Tool
	Resources         []*mcp.Resource
	Prompts           []*mcp.Prompt
	ResourceTemplates []*mcp.ResourceTemplate
}

// Tool returns the tool with the given name, or nil.
func (o Offer) Tool(name string) *mcp.Tool {
	for _, t := range o.Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// ToolNames returns the names of the tools in catalog order.
func (o Offer) ToolNames() []string {
	names := make([]string, len(o.Tools))
	for i, t := range o.Tools {
		names[i] = t.Name
	}
	return names
}

// Catalog is what a discovery found, with a report per list.
type Catalog struct {
	Offer
	Report Report
}

// Mode is how a catalog was discovered.
type Mode uint8

const (
	Blind    Mode = iota + 1 // all four probed, capabilities unknown ([ProbeBlind])
	Declared                 // the lists declared ([ListDeclared], [ListOnly])
)

var modeNames = [...]string{Blind: "blind", Declared: "declared"}

// String returns "blind" or "declared".
func (m Mode) String() string {
	if m > 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// Report says how each list settled.
type Report struct {
	Mode  Mode
	Lists [numLists]ListReport // indexed by [List]
}

// Get returns the report of list l.
func (r Report) Get(l List) ListReport {
	if l < numLists {
		return r.Lists[l]
	}
	return ListReport{List: l}
}

// Status is how one list settled.
type Status uint8

const (
	Unsettled Status = iota // not reported (the zero value)
	Present                 // answered; its items are in the catalog
	Absent                  // not declared, or -32601 (Method not found)
	Degraded                // a non-strict list failed: absent, its verdict says why
	Failed                  // its failure decided the discovery ([*ListError])
)

var statusNames = [...]string{"unsettled", "present", "absent", "degraded", "failed"}

// String returns the status name, e.g. "degraded".
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// Reason says why a list has its status.
type Reason uint8

const (
	ReasonNone     Reason = iota // unsettled
	Listed                       // every page answered
	NotDeclared                  // not in the server's capabilities; nothing sent
	MethodNotFound               // JSON-RPC -32601 (Method not found)
	ListFailed                   // it failed; the verdict says how
	Abandoned                    // canceled: another list decided first
)

var reasonNames = [...]string{"", "listed", "not declared", "method not found", "list failed", "abandoned"}

// String returns the reason in words, e.g. "not declared".
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// ListReport is how one list settled.
type ListReport struct {
	List         List
	Status       Status
	Reason       Reason
	Strict       bool             // its failure fails the discovery (`tools/list` only)
	Pages, Items int              // received, also by a list that then failed
	Verdict      classify.Verdict // the list's error classified; zero when it answered
	Warning      string           // a declared list answered -32601
}

// String renders the report for logs, e.g.
// "resource-templates: absent (method not found: method-not-found (HTTP 400, JSON-RPC -32601))".
func (r ListReport) String() string {
	s := fmt.Sprintf("%s: %s (%s", r.List, r.Status, r.Reason)
	if r.Status == Present {
		s += fmt.Sprintf(", %d items", r.Items)
	}
	if r.Verdict.Class != classify.None {
		s += ": " + r.Verdict.String()
	}
	return s + ")"
}

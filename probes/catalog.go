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

// Catalog is what a discovery found: the server's offer, with a report per
// list.
type Catalog struct {
	Offer
	// Report says how each list settled.
	Report Report
}

// Mode is how a catalog was discovered.
type Mode uint8

const (
	// Blind: all four lists probed, capabilities unknown ([ProbeBlind]).
	Blind Mode = iota + 1
	// Declared: only the lists the server declared ([ListDeclared]).
	Declared
)

// String returns "blind" or "declared".
func (m Mode) String() string {
	switch m {
	case Blind:
		return "blind"
	case Declared:
		return "declared"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// Report says how each list settled.
type Report struct {
	Mode Mode
	// Lists is indexed by [List].
	Lists [numLists]ListReport
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
	// Unsettled: the list has not been reported (the zero value).
	Unsettled Status = iota
	// Present: the list answered; its items are in the catalog (possibly
	// none).
	Present
	// Absent: the server does not offer the list: not declared, or it
	// answered -32601 (Method not found).
	Absent
	// Degraded: a non-strict list failed; it is treated as absent and its
	// verdict says why.
	Degraded
	// Failed: the list's failure decided the outcome and the discovery
	// returned a [*ListError].
	Failed
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
	// ReasonNone: unsettled.
	ReasonNone Reason = iota
	// Listed: every page answered.
	Listed
	// NotDeclared: the server's capabilities do not declare it; nothing was
	// sent.
	NotDeclared
	// MethodNotFound: it answered JSON-RPC -32601 (Method not found).
	MethodNotFound
	// ListFailed: it failed; the verdict says how.
	ListFailed
	// Abandoned: it was canceled because another list's failure decided the
	// outcome first.
	Abandoned
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
	List   List
	Status Status
	Reason Reason
	// Strict reports whether the list's failure fails the discovery
	// (`tools/list` only).
	Strict bool
	// Pages and Items count what was received, also for a list that then
	// failed.
	Pages, Items int
	// Verdict classifies the list's error; zero when it answered.
	Verdict classify.Verdict
	// Warning is set when a declared list answered -32601: the server's
	// capabilities and its methods disagree.
	Warning string
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

package probes

import (
	"errors"
	"testing"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tools/list is always tried; the other lists only as declared.
func TestListDeclaredListsOnlyWhatIsDeclared(t *testing.T) {
	cases := map[string]struct {
		caps *mcp.ServerCapabilities
		want map[List]bool
	}{
		"nil":        {nil, map[List]bool{Tools: true}},
		"tools":      {&mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}, map[List]bool{Tools: true}},
		"resources":  {&mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}, map[List]bool{Tools: true, Resources: true, ResourceTemplates: true}},
		"prompts":    {&mcp.ServerCapabilities{Prompts: &mcp.PromptCapabilities{}, Completions: &mcp.CompletionCapabilities{}}, map[List]bool{Tools: true, Prompts: true}},
		"everything": {&mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}, Prompts: &mcp.PromptCapabilities{}}, map[List]bool{Tools: true, Resources: true, Prompts: true, ResourceTemplates: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			for _, l := range Lists() {
				f.script(l, step{n: 2})
			}

			cat, err := ListDeclared(t.Context(), f, tc.caps, Options{})
			require.NoError(t, err)
			assert.Equal(t, Declared, cat.Report.Mode)
			for _, l := range Lists() {
				r := cat.Report.Get(l)
				if l == Tools {
					assert.Equal(t, tc.caps != nil && tc.caps.Tools != nil, r.Strict, "tools/list is strict only when declared")
				}
				if tc.want[l] {
					assert.Equal(t, 1, f.count(l), l)
					assert.Equal(t, Present, r.Status, l)
					assert.Equal(t, 2, r.Items, l)
				} else {
					assert.Zero(t, f.count(l), "%s was sent though not declared", l)
					assert.Equal(t, Absent, r.Status, l)
					assert.Equal(t, NotDeclared, r.Reason, l)
				}
			}
		})
	}
}

func TestListDeclaredMethodNotFoundWarns(t *testing.T) {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}}
	for _, l := range []List{Tools, ResourceTemplates} {
		t.Run(l.String(), func(t *testing.T) {
			f := newFake().script(Tools, step{n: 1}).script(l, step{err: s1Chain(l.Method(), jsonrpcMethodNotFound, "Bad Request")})
			logs := newSettled()

			cat, err := ListDeclared(t.Context(), f, caps, Options{Logger: logs.logger()})
			require.NoError(t, err)
			r := cat.Report.Get(l)
			assert.Equal(t, Absent, r.Status)
			assert.Equal(t, MethodNotFound, r.Reason)
			assert.Contains(t, r.Warning, l.Method())
			assert.Contains(t, logs.wait(t, t.Context(), l).Warning, "-32601")
		})
	}
}

// The tool catalog is never dropped because of a declared side list.
func TestListDeclaredSideListFailureDegrades(t *testing.T) {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Prompts: &mcp.PromptCapabilities{}, Resources: &mcp.ResourceCapabilities{}}
	f := newFake().
		script(Tools, step{n: 3}).
		script(Prompts, step{err: wireErr(Prompts, 500, 0, rejected("prompts/list", "Internal Server Error"))}).
		script(Resources, step{hang: true})

	cat, err := ListDeclared(t.Context(), f, caps, Options{ProbeTimeout: short})
	require.NoError(t, err)
	assert.Len(t, cat.Tools, 3)
	assert.Equal(t, Degraded, cat.Report.Get(Prompts).Status)
	assert.Equal(t, classify.ServerError, cat.Report.Get(Prompts).Verdict.Class)
	assert.Equal(t, Degraded, cat.Report.Get(Resources).Status)
	assert.Equal(t, classify.Timeout, cat.Report.Get(Resources).Verdict.Class)
	assert.Equal(t, Present, cat.Report.Get(ResourceTemplates).Status)
}

func TestListDeclaredStrictAndPropagating(t *testing.T) {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Prompts: &mcp.PromptCapabilities{}}
	cases := map[string]struct {
		list List
		err  error
		want classify.Class
	}{
		"tools 500":   {Tools, wireErr(Tools, 500, 0, errors.New("Internal Server Error")), classify.ServerError},
		"tools 404":   {Tools, wireErr(Tools, 404, 0, mcp.ErrSessionMissing), classify.SessionExpired},
		"prompts 401": {Prompts, wireErr(Prompts, 401, 0, errors.New("Unauthorized")), classify.Unauthorized},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake().script(tc.list, step{err: tc.err})

			cat, err := ListDeclared(t.Context(), f, caps, Options{})
			le := listErr(t, err)
			assert.Equal(t, tc.list, le.List)
			assert.Equal(t, tc.want, le.Verdict.Class)
			assert.Equal(t, Failed, cat.Report.Get(tc.list).Status)
		})
	}
}

// Undeclared tools: -32601 or an empty list is "no tools", without a
// warning; any other failure leaves the list degraded, and the discovery
// succeeds.
func TestListDeclaredUndeclaredToolsAreSpeculative(t *testing.T) {
	caps := &mcp.ServerCapabilities{Prompts: &mcp.PromptCapabilities{}}
	cases := map[string]struct {
		step   step
		status Status
		reason Reason
	}{
		"-32601": {step{err: s1Chain("tools/list", jsonrpcMethodNotFound, "Bad Request")}, Absent, MethodNotFound},
		"empty":  {step{n: 0}, Present, Listed},
		"500":    {step{err: wireErr(Tools, 500, 0, rejected("tools/list", "Internal Server Error"))}, Degraded, ListFailed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake().script(Tools, tc.step).script(Prompts, step{n: 1})
			cat, err := ListDeclared(t.Context(), f, caps, Options{})
			require.NoError(t, err)
			r := cat.Report.Get(Tools)
			assert.Equal(t, tc.status, r.Status)
			assert.Equal(t, tc.reason, r.Reason)
			assert.Empty(t, r.Warning, "nothing was declared to disagree with")
			assert.Empty(t, cat.Tools)
			assert.Len(t, cat.Prompts, 1)
		})
	}
}

// ListOnly sends exactly the lists named, tools/list strict.
func TestListOnlySendsTheListsNamed(t *testing.T) {
	f := newFake().script(Prompts, step{n: 1}).script(Tools, step{err: wireErr(Tools, 500, 0, errors.New("Internal Server Error"))})
	cat, err := ListOnly(t.Context(), f, []List{Prompts}, Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, f.count(Prompts))
	for _, l := range []List{Tools, Resources, ResourceTemplates} {
		assert.Zero(t, f.count(l), l)
		assert.Equal(t, NotDeclared, cat.Report.Get(l).Reason, l)
	}
	_, err = ListOnly(t.Context(), f, []List{Tools, Prompts}, Options{})
	assert.Equal(t, Tools, listErr(t, err).List, "tools/list is strict")
}

package probes

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// short is a per-probe timeout for tests where a fake hangs until its
// context's deadline; nothing asserts elapsed time.
const short = 20 * time.Millisecond

func TestProbeBlindAllPresent(t *testing.T) {
	f := newFake().
		script(Tools, step{n: 3, next: "c1"}, step{n: 2}).
		script(Resources, step{n: 1}).
		script(Prompts, step{n: 4}).
		script(ResourceTemplates, step{n: 1})

	cat, err := ProbeBlind(t.Context(), f, Options{})
	require.NoError(t, err)

	assert.Len(t, cat.Tools, 5)
	assert.Len(t, cat.Resources, 1)
	assert.Len(t, cat.Prompts, 4)
	assert.Len(t, cat.ResourceTemplates, 1)
	assert.Equal(t, Blind, cat.Report.Mode)
	for _, l := range Lists() {
		r := cat.Report.Get(l)
		assert.Equal(t, l, r.List)
		assert.Equal(t, Present, r.Status, l)
		assert.Equal(t, Listed, r.Reason, l)
		assert.Equal(t, l == Tools, r.Strict, l)
		assert.Equal(t, classify.Class(classify.None), r.Verdict.Class, l)
	}
	assert.Equal(t, 2, cat.Report.Get(Tools).Pages)
	assert.Equal(t, 5, cat.Report.Get(Tools).Items)
	calls := f.calls0(Tools)
	require.Len(t, calls, 2)
	assert.Equal(t, "", calls[0].cursor)
	assert.Equal(t, "c1", calls[1].cursor)
}

// Failure story S1: -32601 on a speculative probe, however it is wrapped,
// means absent, and the tool catalog stands.
func TestProbeBlindSpeculativeMethodNotFoundIsAbsent(t *testing.T) {
	const mnf = jsonrpcMethodNotFound
	tl := ResourceTemplates
	cases := map[string]struct {
		err      error
		annotate func(context.Context, List, error) error // wraps the fake
	}{
		"go-sdk chain 400": {err: s1Chain(tl.Method(), mnf, "Bad Request")},
		"HTTPError 400":    {err: wireErr(tl, 400, mnf, errors.New("Bad Request"))},
		"HTTPError 404":    {err: wireErr(tl, 404, mnf, errors.New("Not Found"))},
		"HTTPError over go-sdk chain": {
			err: wireErr(tl, 400, mnf, s1Chain(tl.Method(), mnf, "Bad Request")),
		},
		"embedded body text": {
			err: errors.New(`Error POSTing to endpoint: {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}`),
		},
		"annotated by the wire layer": {
			err: rejected(tl.Method(), "Bad Request"),
			annotate: func(_ context.Context, l List, err error) error {
				return wireErr(l, 400, mnf, err)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake().script(Tools, step{n: 7}).script(tl, step{err: tc.err})
			var l Lister = f
			if tc.annotate != nil {
				l = annotated{f, tc.annotate}
			}

			cat, err := ProbeBlind(t.Context(), l, Options{})
			require.NoError(t, err)

			assert.Len(t, cat.Tools, 7)
			r := cat.Report.Get(tl)
			assert.Equal(t, Absent, r.Status)
			assert.Equal(t, MethodNotFound, r.Reason)
			assert.Equal(t, classify.MethodNotFound, r.Verdict.Class)
			assert.Empty(t, r.Warning, "a blind probe expects absent lists")
			assert.Nil(t, cat.ResourceTemplates)
		})
	}
}

const jsonrpcMethodNotFound = -32601

func TestProbeBlindToolsMethodNotFoundIsAbsentNotFailure(t *testing.T) {
	f := newFake().
		script(Tools, step{err: s1Chain(Tools.Method(), jsonrpcMethodNotFound, "Bad Request")}).
		script(Prompts, step{n: 2})

	cat, err := ProbeBlind(t.Context(), f, Options{})
	require.NoError(t, err)
	assert.Equal(t, Absent, cat.Report.Get(Tools).Status)
	assert.Equal(t, MethodNotFound, cat.Report.Get(Tools).Reason)
	assert.Empty(t, cat.Tools)
	assert.Len(t, cat.Prompts, 2)
}

func TestProbeBlindSpeculativeFailuresDegrade(t *testing.T) {
	cases := map[string]struct {
		list List
		err  error
		want classify.Class
	}{
		"prompts 500":                {Prompts, wireErr(Prompts, 500, 0, rejected(Prompts.Method(), "Internal Server Error")), classify.ServerError},
		"prompts bare -32005":        {Prompts, rejected(Prompts.Method(), "Service Unavailable"), classify.ServerError},
		"resources 403":              {Resources, wireErr(Resources, 403, 0, errors.New("Forbidden")), classify.Forbidden},
		"templates 400 plain":        {ResourceTemplates, wireErr(ResourceTemplates, 400, 0, errors.New("Bad Request")), classify.Application},
		"resources 429":              {Resources, wireErr(Resources, 429, 0, errors.New("Too Many Requests")), classify.RateLimited},
		"prompts session expired":    {Prompts, fmt.Errorf("calling %q: %w", "prompts/list", mcp.ErrSessionMissing), classify.SessionExpired},
		"templates connection reset": {ResourceTemplates, fmt.Errorf("sending: %w", syscall.ECONNRESET), classify.Transport},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake().script(Tools, step{n: 3}).script(tc.list, step{err: tc.err})

			cat, err := ProbeBlind(t.Context(), f, Options{})
			require.NoError(t, err)

			assert.Len(t, cat.Tools, 3)
			r := cat.Report.Get(tc.list)
			assert.Equal(t, Degraded, r.Status)
			assert.Equal(t, ListFailed, r.Reason)
			assert.Equal(t, tc.want, r.Verdict.Class)
			assert.Contains(t, r.String(), tc.want.String())
		})
	}
}

// A speculative failure settles while tools/list is still in flight, and
// tools/list then answers on a live context: it was not canceled.
func TestProbeBlindSpeculativeSettlesWithoutCancellingTools(t *testing.T) {
	gate := make(chan struct{})
	f := newFake().
		script(Tools, step{n: 4, gate: gate}).
		script(Prompts, step{err: wireErr(Prompts, 500, 0, errors.New("Internal Server Error"))})
	logs := newSettled()

	type result struct {
		cat Catalog
		err error
	}
	done := make(chan result, 1)
	go func() {
		cat, err := ProbeBlind(t.Context(), f, Options{Logger: logs.logger()})
		done <- result{cat, err}
	}()

	assert.Equal(t, Degraded, logs.wait(t, t.Context(), Prompts).Status)
	close(gate)
	res := <-done

	require.NoError(t, res.err)
	assert.Len(t, res.cat.Tools, 4)
	assert.Equal(t, Present, res.cat.Report.Get(Tools).Status)
	assert.NoError(t, f.calls0(Tools)[0].ctxErr, "tools/list's context was canceled")
}

// A speculative probe that hangs is ended by its own timeout: degraded, with
// a timeout verdict, while tools/list's answer stands.
func TestProbeBlindSpeculativeTimeoutDegrades(t *testing.T) {
	f := newFake().
		script(Tools, step{n: 2}).
		script(Resources, step{hang: true})

	cat, err := ProbeBlind(t.Context(), f, Options{ProbeTimeout: short})
	require.NoError(t, err)

	assert.Len(t, cat.Tools, 2)
	r := cat.Report.Get(Resources)
	assert.Equal(t, Degraded, r.Status)
	assert.Equal(t, classify.Timeout, r.Verdict.Class)
	assert.ErrorIs(t, f.calls0(Resources)[0].ctxErr, context.DeadlineExceeded)
}

func TestProbeBlindToolsTimeoutIsStrict(t *testing.T) {
	f := newFake().script(Tools, step{hang: true})

	cat, err := ProbeBlind(t.Context(), f, Options{ProbeTimeout: short})
	le := listErr(t, err)
	assert.Equal(t, Tools, le.List)
	assert.Equal(t, classify.Timeout, le.Verdict.Class)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, Failed, cat.Report.Get(Tools).Status)
	assert.Contains(t, err.Error(), "tools/list")
}

func TestProbeBlindStrictFailureCarriesVerdict(t *testing.T) {
	nullID := &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "tools/list", RequestID: "0", Status: 400, SessionIDSent: true, RPC: classify.RPCError{Present: true, Code: -32000, Message: "Bad Request: No valid session ID provided"}, BodyRPCID: "null"}, Err: errors.New("Bad Request")}
	cases := map[string]struct {
		err  error
		want classify.Class
	}{
		"S2 null-id 400":    {nullID, classify.SessionExpired},
		"404 with session":  {wireErr(Tools, 404, 0, mcp.ErrSessionMissing), classify.SessionExpired},
		"500":               {wireErr(Tools, 500, 0, rejected("tools/list", "Internal Server Error")), classify.ServerError},
		"plain 400":         {wireErr(Tools, 400, 0, errors.New("Bad Request")), classify.Application},
		"connection closed": {fmt.Errorf("calling: %w", mcp.ErrConnectionClosed), classify.Transport},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake().script(Tools, step{err: tc.err}).script(Prompts, step{n: 1})

			cat, err := ProbeBlind(t.Context(), f, Options{})
			le := listErr(t, err)
			assert.Equal(t, Tools, le.List)
			assert.Equal(t, tc.want, le.Verdict.Class)
			assert.ErrorIs(t, err, tc.err)
			assert.Equal(t, Failed, cat.Report.Get(Tools).Status)
			assert.Empty(t, cat.Tools)
		})
	}
}

// Unauthorized propagates from a speculative probe and cancels the others,
// even tools/list.
func TestProbeBlindUnauthorizedPropagates(t *testing.T) {
	cases := map[string]struct {
		list List
		err  error
	}{
		"prompts 401":                      {Prompts, wireErr(Prompts, 401, 0, errors.New("Unauthorized"))},
		"resources 403 insufficient_scope": {Resources, &classify.HTTPError{Exchange: classify.Exchange{Verb: "POST", Method: "resources/list", Status: 403, WWWAuthenticate: `Bearer error="insufficient_scope", scope="files:read"`}, Err: errors.New("Forbidden")}},
		"tools 401":                        {Tools, wireErr(Tools, 401, 0, errors.New("Unauthorized"))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			for _, l := range Lists() {
				f.script(l, step{hang: true}) // only cancellation ends them
			}
			f.script(tc.list, step{err: tc.err})

			cat, err := ProbeBlind(t.Context(), f, Options{})
			le := listErr(t, err)
			assert.Equal(t, tc.list, le.List)
			assert.Equal(t, classify.Unauthorized, le.Verdict.Class)
			for _, l := range Lists() {
				r := cat.Report.Get(l)
				if l == tc.list {
					assert.Equal(t, Failed, r.Status)
					continue
				}
				assert.Equal(t, Degraded, r.Status, l)
				assert.Equal(t, Abandoned, r.Reason, l)
				assert.ErrorIs(t, f.calls0(l)[0].ctxErr, context.Canceled, l)
			}
		})
	}
}

// Unauthorized wins even after tools/list answered: the credentials are bad.
func TestProbeBlindUnauthorizedAfterToolsAnswered(t *testing.T) {
	gate := make(chan struct{})
	f := newFake().
		script(Tools, step{n: 2}).
		script(Prompts, step{gate: gate, err: wireErr(Prompts, 401, 0, errors.New("Unauthorized"))})
	logs := newSettled()

	done := make(chan error, 1)
	var cat Catalog
	go func() {
		var err error
		cat, err = ProbeBlind(t.Context(), f, Options{Logger: logs.logger()})
		done <- err
	}()
	assert.Equal(t, Present, logs.wait(t, t.Context(), Tools).Status)
	close(gate)
	err := <-done

	assert.Equal(t, classify.Unauthorized, listErr(t, err).Verdict.Class)
	assert.Equal(t, Present, cat.Report.Get(Tools).Status, "the report still says what tools/list did")
}

func TestProbeBlindHostCancelPropagates(t *testing.T) {
	f := newFake()
	for _, l := range Lists() {
		f.script(l, step{hang: true})
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		for _, l := range Lists() {
			<-f.started[l]
		}
		cancel()
	}()

	cat, err := ProbeBlind(ctx, f, Options{})
	le := listErr(t, err)
	assert.Equal(t, classify.Canceled, le.Verdict.Class)
	assert.ErrorIs(t, err, context.Canceled)
	failed := 0
	for _, l := range Lists() {
		switch r := cat.Report.Get(l); r.Status {
		case Failed:
			failed++
		default:
			assert.Equal(t, Abandoned, r.Reason, l)
		}
	}
	assert.Equal(t, 1, failed)
}

func TestProbeBlindHostCancelBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	f := newFake().script(Tools, step{hang: true})

	_, err := ProbeBlind(ctx, f, Options{})
	assert.Equal(t, classify.Canceled, listErr(t, err).Verdict.Class)
}

// A Lister that attaches wire facts gets each request's context, which
// carries the caller's values; the facts it attaches decide the verdict, and
// the verdict is taken against the caller's context.
func TestListerFactsSeeCallContextAndCallerClassifies(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(t.Context(), key{}, "caller")
	f := newFake().script(Prompts, step{err: errors.New("Bad Request")})
	var seen []any
	annotate := func(c context.Context, l List, err error) error {
		seen = append(seen, c.Value(key{})) // only one list fails: no race
		return wireErr(l, 400, 0, err)
	}

	cat, err := ProbeBlind(ctx, annotated{f, annotate}, Options{})
	require.NoError(t, err)
	assert.Equal(t, []any{"caller"}, seen)
	r := cat.Report.Get(Prompts)
	assert.Equal(t, classify.Application, r.Verdict.Class)
	assert.Equal(t, 400, r.Verdict.HTTPStatus)
}

func TestProbeTimeoutOption(t *testing.T) {
	f := newFake()
	_, err := ProbeBlind(t.Context(), f, Options{ProbeTimeout: -1})
	require.NoError(t, err)
	assert.False(t, f.calls0(Tools)[0].hasDeadline, "negative timeout: no deadline")

	f = newFake()
	_, err = ProbeBlind(t.Context(), f, Options{})
	require.NoError(t, err)
	assert.True(t, f.calls0(Tools)[0].hasDeadline, "default timeout applies")

	o := Options{}.withDefaults()
	assert.Equal(t, DefaultProbeTimeout, o.ProbeTimeout)
	assert.Equal(t, DefaultMaxPages, o.MaxPages)
	assert.Equal(t, DefaultMaxItems, o.MaxItems)
}

func TestListErrorText(t *testing.T) {
	f := newFake().script(Tools, step{err: wireErr(Tools, 500, 0, errors.New("Internal Server Error"))})
	_, err := ProbeBlind(t.Context(), f, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tools/list")
	assert.Contains(t, err.Error(), "server-error (HTTP 500")
}

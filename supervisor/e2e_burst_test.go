package supervisor_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// cutTogether is a proxy in front of srv that holds the first n tools/call
// requests until all n arrived, then drops their connections together (no
// HTTP answer, the server never saw them): n calls failing with transport
// at once. Later requests pass.
func cutTogether(t *testing.T, srv *mcptest.Server, n int) string {
	t.Helper()
	target, err := url.Parse(srv.URL())
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = srv.HTTPClient().Transport
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				mu.Lock()
				arrived++
				mine := arrived <= n
				if arrived == n {
					close(all)
				}
				mu.Unlock()
				if mine {
					select {
					case <-all:
					case <-r.Context().Done():
					}
					panic(http.ErrAbortHandler)
				}
			}
		}
		r.URL.Path = target.Path
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(ps.Close)
	return ps.URL + target.Path
}

// Many calls failing with transport at once cost one ping, not one each;
// the session, answered, lives.
func TestE2EManyTransportFailuresCostOnePing(t *testing.T) {
	const n = 16
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	t.Cleanup(cancel)
	rec := &events.Recorder{}
	sup := mustNew(t, supervisor.Config{Endpoint: cutTogether(t, srv, n), Observe: supervisor.ObserveConfig{Events: rec}, Stream: supervisor.StreamConfig{Policy: supervisor.StreamOff}})
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = sup.CallTool(ctx, callRecord("c"))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		var ce *supervisor.CallError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, classify.Transport, ce.Verdict.Class, "verdict %s", ce.Verdict)
	}
	_, err = sup.CallTool(ctx, callRecord("after"))
	require.NoError(t, err)
	require.Equal(t, 1, srv.Log().Count("ping"), "one ping for %d failures at once", n)
	require.Equal(t, uint64(1), sup.Generation())
	require.Zero(t, srv.Invocations(mcptest.RecordTool, "c"))
}

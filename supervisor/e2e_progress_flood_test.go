package supervisor_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/supervisor"
)

// floodBurst is how many progress notifications the flood tool sends per
// token it is given.
const floodBurst = 50

// floodServer serves a tool "flood": each call hands the test a channel on
// calls, and for each token the test sends on it (nil: the call's own)
// sends floodBurst progress notifications with it; otherwise it holds until
// its context ends, and then says so on ended. go-sdk's ServerSession.Close
// waits for its handlers without canceling them, and the client sends
// notifications/cancelled after the call returned (mcp/transport.go call):
// the test ends the handlers before the server closes, so a cancellation
// still on its way cannot hold the server's Close.
func floodServer(t *testing.T) (url string, calls chan chan any, ended chan struct{}) {
	t.Helper()
	calls = make(chan chan any)
	ended = make(chan struct{}, 16)
	stop := make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "flood", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "flood"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		defer func() { ended <- struct{}{} }()
		tokens := make(chan any)
		select {
		case calls <- tokens:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-stop:
			return nil, nil, errors.New("the test ended")
		}
		for {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-stop:
				return nil, nil, errors.New("the test ended")
			case tok := <-tokens:
				if tok == nil {
					tok = req.Params.GetProgressToken()
				}
				for i := range floodBurst {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i)})
				}
			}
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(stop) }) // before hs.Close
	return hs.URL, calls, ended
}

// A server flooding progress cannot hold a call past CallTimeoutCeiling,
// and progress for tokens no call carries (another string, the same digits
// as a number, an object) extends nothing.
func TestE2EProgressFloodStopsAtTheCeiling(t *testing.T) {
	url, calls, handlerEnded := floodServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	clock := clockwork.NewFakeClock()
	heard := make(chan struct{}, 16*floodBurst)
	sup := mustNew(t, supervisor.Config{
		Endpoint: url,
		Observe:  supervisor.ObserveConfig{Clock: clock},
		Stream:   supervisor.StreamConfig{Policy: supervisor.StreamOff},
		Limits: supervisor.LimitsConfig{
			CatalogPollInterval: -1,
			CallTimeout:         10 * time.Second,
			CallTimeoutCeiling:  30 * time.Second,
		},
		Client: supervisor.ClientConfig{ClientOptions: mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			heard <- struct{}{} // after the supervisor's own handler: the extension is done
		}}},
	})
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))
	errc := make(chan error, 1)
	start := clock.Now()
	var tokens chan any
	running := func() {
		t.Helper()
		select {
		case tokens = <-calls:
		case <-ctx.Done():
			t.Fatal("the flood tool is not running")
		}
	}
	flood := func(tok any) {
		t.Helper()
		select {
		case tokens <- tok:
		case <-ctx.Done():
			t.Fatal("the flood tool is not running")
		}
		for range floodBurst {
			select {
			case <-heard:
			case <-ctx.Done():
				t.Fatal("the flood did not reach the host")
			}
		}
	}

	ended := func() error {
		t.Helper()
		var err error
		select {
		case err = <-errc:
		case <-ctx.Done():
			t.Fatalf("the call outlived its bound: %s since it started", clock.Since(start))
		}
		select { // the cancellation reached the server
		case <-handlerEnded:
		case <-ctx.Done():
			t.Fatal("the server's handler never heard the call's end")
		}
		return err
	}

	p := &mcp.CallToolParams{Name: "flood"}
	p.SetProgressToken("7")
	go func() { _, err := sup.CallTool(context.Background(), p); errc <- err }()
	running()

	// Unknown tokens: the call still ends at CallTimeout.
	flood(nil) // the call is running: its own token, at t=0
	clock.Advance(5 * time.Second)
	flood("8")
	flood(7)
	flood(map[string]any{"token": "7"})
	clock.Advance(5 * time.Second)
	var ce *supervisor.CallError
	require.ErrorAs(t, ended(), &ce)
	require.Equal(t, classify.Timeout, ce.Verdict.Class, "verdict %s", ce.Verdict)

	// Its own token, flooded every 9s: the call ends at the ceiling, 30s.
	start = clock.Now()
	go func() { _, err := sup.CallTool(context.Background(), p); errc <- err }()
	running()
	flood(nil)
	for clock.Since(start) < 27*time.Second {
		clock.Advance(9 * time.Second)
		flood(nil)
	}
	clock.Advance(30*time.Second - clock.Since(start))
	require.ErrorAs(t, ended(), &ce)
	require.Equal(t, classify.Timeout, ce.Verdict.Class, "verdict %s", ce.Verdict)
}

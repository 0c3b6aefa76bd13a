//lint:file-ignore SA1019 sampling/createMessage is deprecated from protocol 2026-07-28 on (SEP-2577), and still sent by 2025-era servers, whose requests a test here sends

package supervisor

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/events"
	"github.com/mcpsup/mcpsup/stdio"
)

// A stdio server that stops reading its stdin and sends 8,000 pings fills
// the pipe with their responses: at most Config.Limits.MaxResponsesInFlight are being
// written at once, the rest are dropped and reported, so the goroutines
// they would each hold are never started.
func TestCommandResponseFloodIsBounded(t *testing.T) {
	for _, c := range []struct{ config, inFlight int }{{0, 16}, {4, 4}} {
		t.Run(fmt.Sprintf("MaxResponsesInFlight=%d", c.config), func(t *testing.T) {
			const pings = 8000
			r := newStdioRig(t, Config{
				Command: &stdio.Command{StopGrace: 20 * time.Millisecond, KillGrace: 20 * time.Millisecond},
				Limits:  LimitsConfig{MaxResponsesInFlight: c.config},
			})
			r.sup.Start()
			r.ready()
			before := runtime.NumGoroutine()
			res, err := r.call("deafflood", map[string]any{"n": pings})
			require.NoError(t, err)
			require.False(t, res.IsError)
			// A 64 KiB pipe holds some 1,400 responses: 4,096 drops mean the
			// reader has taken most of the pings.
			e := r.waitEvent(events.KindResponseDropped, "4096 dropped in all")
			assert.Equal(t, c.inFlight, e.Bound)
			assert.Less(t, runtime.NumGoroutine()-before, 100, "goroutines started by the flood")
			require.NoError(t, r.sup.Close())
		})
	}
}

// samplingHandler is a host's CreateMessageHandler that tells started of
// each call and waits for its context.
func samplingHandler(started chan<- struct{}) func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return func(ctx context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
}

// TestCommandServerRequestsAreBoundedAndEndWithTheSession: over stdio as
// over HTTP, the server's requests are handled at most MaxResponsesInFlight
// at once (the rest refused, each of the first 16 an event), and a handler
// waiting on its context does not hold Close.
func TestCommandServerRequestsAreBoundedAndEndWithTheSession(t *testing.T) {
	const bound, n = 4, 20
	started := make(chan struct{}, n)
	r := newStdioRig(t, Config{Limits: LimitsConfig{MaxResponsesInFlight: bound}, Client: ClientConfig{ClientOptions: mcp.ClientOptions{CreateMessageHandler: samplingHandler(started)}}})
	r.sup.Start()
	r.ready()
	_, err := r.call("sample", map[string]any{"n": n})
	require.NoError(t, err)
	r.waitEvent(events.KindServerRequestRefused, fmt.Sprintf("; %d refused in all", n-bound))
	for range bound { // n-bound refused: bound admitted, each reaching the handler
		<-started
	}
	closed := make(chan error, 1)
	go func() { closed <- r.sup.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-r.ctx.Done():
		t.Fatal("Close still waits for the sampling handlers")
	}
}

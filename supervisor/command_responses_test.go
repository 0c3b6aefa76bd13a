package supervisor

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A stdio server that stops reading its stdin and sends 8,000 pings fills
// the pipe with their responses: at most Config.MaxResponsesInFlight are being
// written at once, the rest are dropped and reported, so the goroutines
// they would each hold are never started.
func TestCommandResponseFloodIsBounded(t *testing.T) {
	for _, c := range []struct{ config, inFlight int }{{0, 16}, {4, 4}} {
		t.Run(fmt.Sprintf("MaxResponsesInFlight=%d", c.config), func(t *testing.T) {
			const pings = 8000
			r := newStdioRig(t, Config{MaxResponsesInFlight: c.config,
				Command: &Command{StopGrace: 20 * time.Millisecond, KillGrace: 20 * time.Millisecond}})
			r.sup.Start()
			r.ready()
			before := runtime.NumGoroutine()
			res, err := r.call("deafflood", map[string]any{"n": pings})
			require.NoError(t, err)
			require.False(t, res.IsError)
			// A 64 KiB pipe holds some 1,400 responses: 4,096 drops mean the
			// reader has taken most of the pings.
			e := r.waitEvent(KindResponseDropped, "4096 dropped in all")
			assert.Contains(t, e.Detail, fmt.Sprintf("(%d already being written to its stdin", c.inFlight))
			assert.Less(t, runtime.NumGoroutine()-before, 100, "goroutines started by the flood")
			require.NoError(t, r.sup.Close())
		})
	}
}

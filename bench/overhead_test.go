package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Figure 4 times all three clients, each through its own path, in every
// setup, and renders a row for each and each setup's ratios.
func TestCallOverheadTimesThreeClients(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := CallOverhead(ctx, 2, len(overheadOrders), 2, false)
	require.NoError(t, o.Err)
	for name, f := range map[string]CallFigures{"supervised": o.Supervised, "wire": o.Wire, "bare": o.Bare} {
		require.Positive(t, f.Median, name)
		require.Positive(t, f.Allocs, name)
	}
	require.Positive(t, o.PairedRatio)
	require.Positive(t, o.WirePairedRatio)
	require.Len(t, o.SetupRatios, 2)
	require.Len(t, o.WireSetupRatios, 2)
	if _, ok := processCPU(); ok {
		require.Positive(t, o.CPURatio)
		require.Positive(t, o.Bare.CPU)
	}
	out := RenderOverhead(o)
	require.Contains(t, out, "Paired ratio per setup: mcpsup ")
	for _, row := range []string{"| " + string(Supervised) + " |", "| mcpsup wire layer alone |", "| " + string(BareSDK) + " |"} {
		require.Equal(t, 1, strings.Count(out, row), row)
	}
}

// A median of an even number is the mean of the middle two.
func TestMedian(t *testing.T) {
	require.InDelta(t, 1.02, median([]float64{1.05, 1.01, 0.99, 1.03}), 1e-9)
	require.InDelta(t, 1.01, median([]float64{1.05, 1.01, 0.99}), 1e-9)
	require.Equal(t, 3*time.Microsecond, median([]time.Duration{4 * time.Microsecond, time.Microsecond, 2 * time.Microsecond, 9 * time.Microsecond}))
}

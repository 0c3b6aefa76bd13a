package bench

import (
	"context"
	"fmt"
	"slices"
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
	o := CallOverhead(ctx, 6, len(overheadOrders), 2, false)
	require.NoError(t, o.Err)
	for name, f := range map[string]CallFigures{"supervised": o.Supervised, "wire": o.Wire, "bare": o.Bare} {
		require.Positive(t, f.Median, name)
		require.Positive(t, f.Allocs, name)
	}
	require.Positive(t, o.PairedRatio)
	require.Positive(t, o.WirePairedRatio)
	require.Len(t, o.SetupRatios, 6)
	require.Len(t, o.WireSetupRatios, 6)
	// Six setups give the median's interval from the smallest and largest.
	require.Equal(t, slices.Min(o.SetupRatios), o.PairedInterval.Lo)
	require.Equal(t, slices.Max(o.SetupRatios), o.PairedInterval.Hi)
	require.Equal(t, slices.Max(o.WireSetupRatios), o.WirePairedInterval.Hi)
	if _, ok := processCPU(); ok {
		require.Positive(t, o.CPURatio)
		require.Positive(t, o.Bare.CPU)
	}
	out := RenderOverhead(o)
	require.Contains(t, out, "Paired ratio per setup: mcpsup ")
	require.Contains(t, out, fmt.Sprintf("**%.3f** (%.3f to %.3f)", o.PairedRatio, o.PairedInterval.Lo, o.PairedInterval.Hi))
	require.Contains(t, out, "at least 97% (the 1st smallest and 1st largest of the 6 setups' ratios")
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

// The interval of a median is the pair of order statistics whose binomial
// tails add up to at most 5%: the 7th smallest and largest of 24 samples
// (97.7%), the 1st of 6 (96.9%); 5 samples are too few.
func TestMedianInterval(t *testing.T) {
	xs := make([]float64, 24)
	for i := range xs {
		xs[i] = float64((i*7)%24) + 1 // 1..24, shuffled
	}
	i := medianInterval(xs)
	require.Equal(t, 7, i.Rank)
	require.Equal(t, 7.0, i.Lo)
	require.Equal(t, 18.0, i.Hi)
	require.InDelta(t, 0.9773, i.Level, 1e-4)

	six := []float64{3, 1, 6, 2, 5, 4}
	require.Equal(t, Interval{Lo: 1, Hi: 6, Level: 0.96875, Rank: 1}, medianInterval(six))
	require.Equal(t, []float64{3, 1, 6, 2, 5, 4}, six, "the samples are not sorted in place")

	require.Equal(t, Interval{}, medianInterval([]float64{1, 2, 3, 4, 5}))
}

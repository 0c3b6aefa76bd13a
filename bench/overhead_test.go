package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Figure 4 times all three clients, each through its own path, and renders
// a row for each.
func TestCallOverheadTimesThreeClients(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := CallOverhead(ctx, len(overheadOrders), 2, false)
	require.NoError(t, o.Err)
	for name, f := range map[string]CallFigures{"supervised": o.Supervised, "wire": o.Wire, "bare": o.Bare} {
		require.Positive(t, f.Median, name)
		require.Positive(t, f.Allocs, name)
	}
	require.Positive(t, o.PairedRatio)
	require.Positive(t, o.WirePairedRatio)
	out := RenderOverhead(o)
	for _, row := range []string{"| " + string(Supervised) + " |", "| mcpsup wire layer alone |", "| " + string(BareSDK) + " |"} {
		require.Equal(t, 1, strings.Count(out, row), row)
	}
}

//go:build unix

package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Figure 9 measures every scenario (a restart is a new session each time)
// and renders a row for each.
func TestStdioRestartTimes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rs := StdioRestartTimes(ctx, ".", 3)
	require.Len(t, rs, 3)
	for _, r := range rs {
		require.NoError(t, r.Err, r.Scenario)
		require.Equal(t, 3, r.Runs)
		require.Positive(t, r.Min, r.Scenario)
	}
	md := RenderStdio(rs)
	require.True(t, strings.HasPrefix(md, "## 9. stdio server restart"))
	require.Contains(t, md, "| "+StdioBareSDK+" | 3 |")
}

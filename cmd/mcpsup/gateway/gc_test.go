package gateway_test

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/cmd/mcpsup/gateway"
)

// The gateway process's GC default applies only when the operator set
// neither GOGC nor GOMEMLIMIT.
func TestSetGCDefault(t *testing.T) {
	was := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(was) })

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	require.True(t, gateway.SetGCDefault())
	require.Equal(t, gateway.DefaultGCPercent, debug.SetGCPercent(100))

	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "200")
			require.False(t, gateway.SetGCDefault())
			require.Equal(t, 100, debug.SetGCPercent(100), "the operator's setting stays")
		})
	}
}

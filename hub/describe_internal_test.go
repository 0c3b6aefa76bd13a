package hub

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/supervisor"
)

// The servers an error lists are bounded: WaitReady's error and an
// unknown name's both name at most maxListedServers, then how many more.
func TestErrorsListAtMostEightServers(t *testing.T) {
	var hs []Health
	for i := range 10 {
		hs = append(hs, Health{Server: fmt.Sprintf("s%d", i), State: supervisor.Connecting})
	}
	d := describeServers(hs)
	require.Len(t, d, maxListedServers+1)
	require.Equal(t, "s7 (connecting)", d[7])
	require.Equal(t, "and 2 more", d[8])
	text := (&NotReadyError{Servers: hs}).Error()
	require.True(t, strings.HasSuffix(text, " s7 (connecting) and 2 more"), text)
	require.NotContains(t, text, "s8")
}

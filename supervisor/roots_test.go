//lint:file-ignore SA1019 roots are deprecated from protocol 2026-07-28 on (SEP-2577), and still served by 2025-era servers

package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// A nil root given to AddRoots is skipped for the clients of live sessions
// as for later ones: go-sdk keys a root by its URI, so a nil one would
// panic in mcp.Client.AddRoots, holding the client's lock for good. The
// server lists the others, sorted by URI.
func TestAddRootsSkipsANilRootOnALiveSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var roots rootSet
	cl := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	roots.attach(cl)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil).Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := cl.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // roots/list is 2025-era
	require.NoError(t, err)

	panicked := func() (p any) {
		defer func() { p = recover() }()
		roots.add([]*mcp.Root{{URI: "file:///b"}, nil, {URI: "file:///a"}})
		return nil
	}()
	require.Nil(t, panicked, "the client is left locked: no Close")
	res, err := ss.ListRoots(ctx, nil)
	require.NoError(t, err)
	var uris []string
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	require.Equal(t, []string{"file:///a", "file:///b"}, uris)
	require.NoError(t, cs.Close())
	require.NoError(t, ss.Close())
}

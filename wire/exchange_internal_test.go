package wire

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

type otherKey struct{}

// The handshake's slot records while the handshake runs and is gone once
// released, while the context's other values stay: go-sdk keeps this
// context for the session's life.
func TestConnectExchangeReleasesItsSlot(t *testing.T) {
	parent := context.WithValue(context.Background(), otherKey{}, "kept")
	ctx, release := withConnectExchange(parent)
	s, _ := ctx.Value(slotKey{}).(*slot)
	require.NotNil(t, s)
	s.add(Exchange{Method: methodInitialize, RequestID: "0", Status: 200})
	x, ok := LastExchange(ctx)
	require.True(t, ok)
	require.Equal(t, methodInitialize, x.Method)

	release()
	require.Nil(t, ctx.Value(slotKey{}))
	_, ok = LastExchange(ctx)
	require.False(t, ok, "no record is reachable from the kept context")
	require.Equal(t, "kept", ctx.Value(otherKey{}))
}

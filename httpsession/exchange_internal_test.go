package httpsession

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
	s, _ := ctx.Value(slotKey{}).(*Exchanges)
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

// AfterAnswers waits for the call's last open answer stream.
func TestAfterAnswersWaitsForTheLastStream(t *testing.T) {
	ctx := WithExchange(context.Background())
	s := ctx.Value(slotKey{}).(*Exchanges)
	s.streamOpened()
	s.streamOpened()
	var n int
	AfterAnswers(ctx, func() { n++ })
	require.Zero(t, n, "two streams open")
	s.streamClosed()
	require.Zero(t, n, "one stream open")
	s.streamClosed()
	require.Equal(t, 1, n)
}

// Every release handed to AfterAnswers while a stream is open runs once it
// closes, none replacing another.
func TestAfterAnswersRunsEveryRelease(t *testing.T) {
	ctx := WithExchange(context.Background())
	s := ctx.Value(slotKey{}).(*Exchanges)
	s.streamOpened()
	var order []int
	AfterAnswers(ctx, func() { order = append(order, 1) })
	AfterAnswers(ctx, func() { order = append(order, 2) })
	require.Empty(t, order)
	s.streamClosed()
	require.Equal(t, []int{1, 2}, order)
}

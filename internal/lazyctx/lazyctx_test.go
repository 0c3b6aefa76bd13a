package lazyctx_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/internal/lazyctx"
)

func TestContextIsMadeOnceFromTheFirstParent(t *testing.T) {
	var l lazyctx.Life
	type key struct{}
	first := context.WithValue(context.Background(), key{}, "first")
	ctx := l.Context(first)
	require.Equal(t, ctx, l.Context(context.Background()), "one context")
	require.Equal(t, "first", ctx.Value(key{}))
	require.NoError(t, ctx.Err())
	require.False(t, l.Ended())
	l.End()
	require.ErrorIs(t, ctx.Err(), context.Canceled)
	require.True(t, l.Ended())
}

func TestContextMadeAfterEndIsDone(t *testing.T) {
	var l lazyctx.Life
	l.End()
	require.ErrorIs(t, l.Context(context.Background()).Err(), context.Canceled)
}

func TestContextEndsWithItsParent(t *testing.T) {
	var l lazyctx.Life
	parent, cancel := context.WithCancel(context.Background())
	ctx := l.Context(parent)
	cancel()
	require.ErrorIs(t, ctx.Err(), context.Canceled)
	require.False(t, l.Ended(), "End was not called")
}

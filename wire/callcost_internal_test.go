package wire

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStreamForKeepsTheFirstInTheSlot: a call's first answer stream is the
// storage kept in its slot; a second one of the same call, and one made
// without a slot, are their own.
func TestStreamForKeepsTheFirstInTheSlot(t *testing.T) {
	ctx := WithExchange(context.Background())
	s := ctx.Value(slotKey{}).(*slot)
	first := streamFor(ctx)
	assert.Same(t, &s.stream, first)
	second := streamFor(ctx)
	assert.NotSame(t, first, second)
	assert.NotSame(t, first, streamFor(context.Background()))
}

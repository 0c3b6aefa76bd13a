package supervisor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
)

// A call without a name (ping) is named by its method alone, as its
// call-failed event is: no empty quotes.
func TestCallErrorTextOmitsAnEmptyName(t *testing.T) {
	sup, err := New(Config{Endpoint: "http://127.0.0.1:1/mcp"})
	require.NoError(t, err)
	defer sup.Close()
	err = sup.Ping(context.Background())
	require.ErrorIs(t, err, ErrNotReady)
	require.Equal(t, "mcpsup: ping: unknown [not-sent]: mcpsup: not ready (state idle: Start was not called)", err.Error())

	named := &CallError{Op: "tools/call", Name: "search", Verdict: classify.Verdict{Class: classify.Forbidden, HTTPStatus: 403}, Delivery: Answered}
	require.Equal(t, `mcpsup: tools/call "search": forbidden (HTTP 403)`, named.Error())
}

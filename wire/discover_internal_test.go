package wire

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An answer's responses to other ids (a number id of the same digits
// included) are passed over; only the one to the request's id counts.
func TestDiscoverResponseMatchesOnlyItsID(t *testing.T) {
	stream := "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"other\",\"result\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"7\",\"error\":{\"code\":-32601,\"message\":\"m\"}}\n\n"
	resp, err := discoverResponse(strings.NewReader(stream), "text/event-stream", "7")
	require.NoError(t, err)
	require.Equal(t, "7", resp.ID.Raw())
	require.Error(t, resp.Error)

	_, err = discoverResponse(strings.NewReader(`{"jsonrpc":"2.0","id":7,"result":{}}`), "application/json", "7")
	require.Error(t, err)
}

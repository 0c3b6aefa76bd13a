package httpsession

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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

// A discover's event stream is read as every other ([sse.Reader], WHATWG
// HTML, server-sent events): data lines are joined with LF ("append the
// field value to the data buffer, then append a single U+000A LINE FEED"),
// so a number split over two lines is no JSON rather than another number,
// and a CR ends a line. Joined without the LF, the first event gave the
// response a result the server never sent ({"n":12}).
func TestDiscoverResponseReadsEventsAsWHATWGSays(t *testing.T) {
	stream := "data: {\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{\"n\":1\ndata: 2}}\n\n" +
		"data:  {\"jsonrpc\":\"2.0\",\"id\":\"7\",\r" + "data: \"result\":{\"n\":3}}\r\r"
	resp, err := discoverResponse(strings.NewReader(stream), "text/event-stream", "7")
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":3}`, string(resp.Result))
}

package httpsession

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A conn that failed hands go-sdk's reader the failure's cause, so the calls
// go-sdk still holds end with it; one that Close ended reads io.EOF, which
// go-sdk's jsonrpc2 takes for a clean end (mcp.Connection's Read contract).
func TestReadReturnsTheConnsEndCause(t *testing.T) {
	gone := errors.New("the session is gone")
	failed := testConn(t, Config{}, "http://127.0.0.1:1/mcp")
	failed.fail(gone)
	_, err := failed.Read(context.Background())
	require.ErrorIs(t, err, gone, "a failure is read as its cause")

	closed := testConn(t, Config{}, "http://127.0.0.1:1/mcp")
	closed.detached = true // nothing to DELETE
	require.NoError(t, closed.Close())
	_, err = closed.Read(context.Background())
	require.ErrorIs(t, err, io.EOF, "Close is read as io.EOF")
}

// failingTransport fails every request before any answer.
type failingTransport struct{}

func (failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}

// A request that got no HTTP answer reaches go-sdk as an error response
// that says so, not as a status 0.
func TestNoAnswerIsNotAStatus(t *testing.T) {
	c := testConn(t, Config{Base: failingTransport{}}, "http://127.0.0.1:1/mcp")
	writeRaw(t, c, context.Background(), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`)
	got := readUntilResponse(t, c)
	r := got[len(got)-1].(*jsonrpc.Response)
	var werr *jsonrpc.Error
	require.ErrorAs(t, r.Error, &werr)
	assert.EqualValues(t, CodeHTTPAnswer, werr.Code)
	assert.Equal(t, `no HTTP answer (request failed: Post "http://127.0.0.1:1/mcp": connection refused)`, werr.Message)
}

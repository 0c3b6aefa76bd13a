package httpsession

import (
	"context"
	"errors"
	"io"
	"testing"

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

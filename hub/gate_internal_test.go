package hub

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
)

type countingRT struct{ n int }

func (c *countingRT) RoundTrip(*http.Request) (*http.Response, error) {
	c.n++
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(""))}, nil
}

type closeBody struct {
	io.Reader
	closed bool
}

func (b *closeBody) Close() error { b.closed = true; return nil }

func TestHoldGateRefusesOnceTheHoldEnded(t *testing.T) {
	clock := clockwork.NewFakeClock()
	base := &countingRT{}
	g := &holdGate{server: "search", clock: clock}
	g.extend(clock.Now().Add(time.Second))
	c := serverClient(&http.Client{Transport: base}, nil, g)

	req := func() (*closeBody, error) {
		body := &closeBody{Reader: strings.NewReader("{}")}
		r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/mcp", body)
		require.NoError(t, err)
		res, err := c.Transport.RoundTrip(r)
		if err == nil {
			res.Body.Close()
		}
		return body, err
	}
	_, err := req()
	require.NoError(t, err)
	require.Equal(t, 1, base.n)

	clock.Advance(time.Second)
	body, err := req()
	require.ErrorIs(t, err, ErrLeaseLost)
	he, ok := errors.AsType[*HoldEndedError](err)
	require.True(t, ok)
	require.Equal(t, "search", he.Server)
	require.Equal(t, 1, base.n, "refused unsent")
	require.True(t, body.closed, "a RoundTripper closes the body it does not send")

	g.extend(clock.Now().Add(time.Second)) // renewed
	_, err = req()
	require.NoError(t, err)
	require.Equal(t, 2, base.n)
}

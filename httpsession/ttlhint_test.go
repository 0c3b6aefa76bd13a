package httpsession_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/mcpsup/mcpsup/httpsession"
)

// listServer answers tools/list with result.
type listServer struct{ result string }

func (l *listServer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	if r.Method != http.MethodPost {
		return fakeResponse(r, 405, nil, nil), nil
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	readFakeRequest(r, &msg)
	h := http.Header{"Content-Type": {"application/json"}}
	switch {
	case msg.Method == "initialize":
		return handshakeAnswer(r, msg.ID, nil, "l"), nil
	case len(msg.ID) == 0:
		return fakeResponse(r, 202, nil, nil), nil
	}
	return fakeResponse(r, 200, h, []byte(`{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":`+l.result+`}`)), nil
}

// A list result's ttlMs that go-sdk cannot decode into its int, however it
// is written, costs the hint, never the listing.
func TestOddTTLHintsKeepTheListing(t *testing.T) {
	const tool = `"tools":[{"name":"a","inputSchema":{"type":"object"}}]`
	for _, hint := range []string{
		`"ttlMs":5`,
		`"ttlMs":1.5`,
		`"ttlMs":1e2`,
		`"ttlMs":-0.0`,
		`"ttlMs":99999999999999`,
		`"ttlMs":"5"`,
		`"ttlMs":null`,
		`"ttlMs":{}`,
		`"ttlMs":"x","ttlMs":5`,
		`"ttlMs":5,"ttlMs":"x"`,
		`"ttl\u004ds":"x"`,
		`"ttlMs":5,"ttl\u004ds":"x"`,
	} {
		t.Run(hint, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sess := openFaked(t, ctx, &listServer{result: "{" + tool + "," + hint + "}"}, httpsession.Config{})
			defer sess.Close()
			res, err := sess.ClientSession().ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("the listing failed: %v", err)
			}
			if len(res.Tools) != 1 || res.Tools[0].Name != "a" {
				t.Fatalf("tools %+v", res.Tools)
			}
		})
	}
}

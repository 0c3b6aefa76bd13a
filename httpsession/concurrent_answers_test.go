package httpsession_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/httpsession"
)

// echoServer answers every tools/call with an event stream read in pieces
// of a few bytes: a notification whose data line is longer than the
// answer stream's read buffer, then the response, whose text is the call's
// argument "n" and a long tail. Odd calls are answered with JSON instead.
// A call whose n is 2 mod 4 gets the notification, then a stream that
// holds until the request's context ends; blocked is told of it.
type echoServer struct {
	tail    string
	blocked chan int
}

func (e *echoServer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	if r.Method == http.MethodDelete {
		return fakeResponse(r, 204, nil, nil), nil
	}
	if r.Method == http.MethodGet {
		return fakeResponse(r, 405, nil, nil), nil
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Arguments struct {
				N int `json:"n"`
			} `json:"arguments"`
		} `json:"params"`
	}
	readFakeRequest(r, &msg)
	id := string(msg.ID)
	switch {
	case msg.Method == "initialize":
		return handshakeAnswer(r, msg.ID, http.Header{httpsession.HeaderSessionID: {"echo-session"}}, "echo"), nil
	case len(msg.ID) == 0:
		return fakeResponse(r, 202, nil, nil), nil
	}
	n := msg.Params.Arguments.N
	result := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%d %s"}]}}`, id, n, e.tail)
	if n%2 == 1 {
		return fakeResponse(r, 200, http.Header{"Content-Type": {"application/json"}}, []byte(result)), nil
	}
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + e.tail + `"}}`
	stream := "id: 1\ndata: " + note + "\n\nid: 2\ndata: " + result + "\n\n"
	resp := fakeResponse(r, 200, http.Header{"Content-Type": {"text/event-stream"}}, nil)
	var src io.Reader = &pieces{r: strings.NewReader(stream), n: 3 + n%7}
	if n%4 == 2 {
		src = io.MultiReader(&pieces{r: strings.NewReader("id: 1\ndata: " + note + "\n\n"), n: 5},
			&holdReader{ctx: r.Context(), n: n, blocked: e.blocked})
	}
	resp.Body = io.NopCloser(src)
	resp.ContentLength = -1
	return resp, nil
}

// holdReader tells blocked of its call n, then reads nothing until ctx
// ends.
type holdReader struct {
	ctx     context.Context
	n       int
	blocked chan int
}

func (h *holdReader) Read([]byte) (int, error) {
	h.blocked <- h.n
	<-h.ctx.Done()
	return 0, h.ctx.Err()
}

// pieces reads at most n bytes at a time.
type pieces struct {
	r io.Reader
	n int
}

func (p *pieces) Read(b []byte) (int, error) { return p.r.Read(b[:min(len(b), p.n)]) }

// Many calls at once on one session, answered with long events read in
// pieces and with JSON, each get their own result, byte for byte; calls
// canceled mid-answer fail alone as canceled.
func TestConcurrentCallsGetTheirOwnAnswers(t *testing.T) {
	tail := strings.Repeat("x", 9<<10) // past the 4 KiB read buffer
	srv := &echoServer{tail: tail, blocked: make(chan int)}
	clock := clockwork.NewFakeClock()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess := openFaked(t, ctx, srv, httpsession.Config{Clock: clock})
	defer sess.Close()
	cs := sess.ClientSession()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	cancels := make([]context.CancelFunc, 64)
	held := 0
	for n := range 64 {
		callCtx, cancelCall := context.WithCancel(httpsession.WithExchange(ctx))
		cancels[n] = cancelCall
		if n%4 == 2 {
			held++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "t", Arguments: map[string]any{"n": n}})
			if n%4 == 2 {
				if !errors.Is(err, context.Canceled) {
					errs <- fmt.Errorf("held call %d: %v, want canceled", n, err)
				}
				return
			}
			if err != nil {
				errs <- fmt.Errorf("call %d: %w", n, err)
				return
			}
			if got, want := res.Content[0].(*mcp.TextContent).Text, fmt.Sprintf("%d %s", n, tail); got != want {
				errs <- fmt.Errorf("call %d got %.20q (%d bytes), want %.20q (%d bytes)", n, got, len(got), want, len(want))
			}
		}()
	}
	for range held {
		cancels[<-srv.blocked]()
	}
	wg.Wait()
	for _, c := range cancels {
		c()
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: map[string]any{"n": 1}}); err != nil {
		t.Errorf("the session was lost: %v", err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

package supervisor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/supervisor"
)

// relistServer is a stateful 2025-06-18 server written by hand: sessions
// sess-1, sess-2, ...; each session's standalone GET stream writes what is
// sent on its push channel; the second tools/list of sess-1 (its first
// re-list) is held until the request ends; expire makes every session
// answer 404.
type relistServer struct {
	mu     sync.Mutex
	n      int
	live   map[string]bool
	lists  map[string]int
	pushes map[string]chan string
	held   atomic.Bool // sess-1's re-list is held
}

func newRelistServer(t *testing.T) (*relistServer, string) {
	s := &relistServer{live: map[string]bool{}, lists: map[string]int{}, pushes: map[string]chan string{}}
	ts := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return s, ts.URL
}

func (s *relistServer) push(sid string) chan string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pushes[sid] == nil {
		s.pushes[sid] = make(chan string, 1)
	}
	return s.pushes[sid]
}

func (s *relistServer) listsOf(sid string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists[sid]
}

func (s *relistServer) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.live)
}

func (s *relistServer) serve(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	live := s.live[sid]
	s.mu.Unlock()
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodGet:
		if !live {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case m := <-s.push(sid):
				fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":%q}\n\n", m)
				w.(http.Flusher).Flush()
			}
		}
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	if msg.Method != "initialize" && !live {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result := `{}`
	switch msg.Method {
	case "initialize":
		s.mu.Lock()
		s.n++
		sid = fmt.Sprintf("sess-%d", s.n)
		s.live[sid] = true
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"relist","version":"1"}}`
	case "tools/list":
		s.mu.Lock()
		s.lists[sid]++
		n := s.lists[sid]
		s.mu.Unlock()
		if sid == "sess-1" && n == 2 {
			s.held.Store(true)
			<-r.Context().Done() // answered never: the client must give up
			return
		}
		result = `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`
	case "tools/call":
		result = `{"content":[{"type":"text","text":"ok"}]}`
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
}

// A re-list of a session still running when the session is replaced must
// neither hold the new session's re-lists back nor outlive its session: it
// ends when its session is released (after the grace its calls get), and
// what the new session asked meanwhile (a list_changed, a RefreshCatalog)
// then runs. The old session's server never answers that re-list.
func TestRelistOfAReplacedSessionHoldsNothingBack(t *testing.T) {
	srv, url := newRelistServer(t)
	clock := clockwork.NewFakeClock()
	var heard atomic.Int64
	cfg := supervisor.Config{Endpoint: url, Name: "relist", Era: supervisor.Era2025, Observe: supervisor.ObserveConfig{Clock: clock}}
	cfg.Client.ClientOptions.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { heard.Add(1) }
	sup, err := supervisor.New(cfg)
	require.NoError(t, err)
	defer sup.Close()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	sup.Start()
	require.NoError(t, sup.WaitForState(ctx, supervisor.Ready))

	// sess-1's re-list starts and is never answered.
	oldRefresh := make(chan error, 1)
	go func() { oldRefresh <- sup.RefreshCatalog(ctx) }()
	require.Eventually(t, srv.held.Load, e2eTimeout, time.Millisecond)

	// sess-1 expires; a call learns it, and sess-2 is ready.
	srv.expire()
	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: "a"})
	require.Error(t, err)
	require.Eventually(t, func() bool { return sup.Generation() == 2 && sup.State() == supervisor.Ready }, e2eTimeout, time.Millisecond)
	require.Equal(t, 1, srv.listsOf("sess-2"), "its discovery")

	// sess-2's tools change while sess-1's re-list still runs. Once the
	// host's handler heard it, the supervisor's wish is in its inbox,
	// ahead of anything the release below brings.
	srv.push("sess-2") <- "notifications/tools/list_changed"
	require.Eventually(t, func() bool { return heard.Load() == 1 }, e2eTimeout, time.Millisecond)

	clock.Advance(time.Minute) // sess-1's release grace, and any gap, pass
	require.Eventually(t, func() bool { return srv.listsOf("sess-2") == 2 }, e2eTimeout, time.Millisecond,
		"the new session's tools re-listed")
	require.Equal(t, 2, srv.listsOf("sess-1"), "sess-1 was not listed again")
	require.NoError(t, <-oldRefresh, "served by the new session's discovery")
}

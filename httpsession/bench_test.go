package httpsession_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/httpsession"
)

// BenchmarkRoundTripCallTool measures one tools/call through the Transport
// against a real go-sdk server on 127.0.0.1 (client and server allocations
// together).
func BenchmarkRoundTripCallTool(b *testing.B) {
	_, url := newServer(b, nil)
	s, err := httpsession.Open(context.Background(), httpsession.Options{Endpoint: url, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ClientSession().CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
}

// latency is the delay a benchmark gateway adds before every request.
const latency = 20 * time.Millisecond

// delayed makes the gateway wait latency before answering every request,
// like a distant server.
func delayed(w http.ResponseWriter, r *http.Request, method string, n int) bool {
	select {
	case <-time.After(latency):
	case <-r.Context().Done():
	}
	return false
}

// BenchmarkOpenDelayed measures Open (initialize, the standalone stream's
// start) against a server that answers every request after latency; the
// round-trips metric is the time in units of latency.
func BenchmarkOpenDelayed(b *testing.B) {
	g, url := newServer(b, nil)
	g.setFault(delayed)
	for b.Loop() {
		s, err := httpsession.Open(context.Background(), httpsession.Options{Endpoint: url, Era: httpsession.Era2025})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = s.Detach()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed())/float64(latency)/float64(b.N), "round-trips/op")
}

// BenchmarkResumeBlindDelayed measures a blind Resume and its first
// tools/list against a server that answers every request after latency.
func BenchmarkResumeBlindDelayed(b *testing.B) {
	for _, mode := range []struct {
		name   string
		stream httpsession.StreamMode
	}{{"stream-on", httpsession.StreamOn}, {"stream-off", httpsession.StreamOff}} {
		b.Run(mode.name, func(b *testing.B) {
			g, url := newServer(b, nil)
			st := blindState(b, url)
			g.setFault(delayed)
			for b.Loop() {
				s, err := httpsession.Resume(context.Background(), httpsession.Options{Endpoint: url, Stream: mode.stream}, st)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.ClientSession().ListTools(context.Background(), nil); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = s.Detach()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed())/float64(latency)/float64(b.N), "round-trips/op")
		})
	}
}

// BenchmarkCallToolWireVsBare measures one tools/call against the same real
// go-sdk server on 127.0.0.1, through the Transport ("wire") and through a
// bare go-sdk StreamableClientTransport ("bare"), standalone stream off in
// both: the difference is what the wire layer costs on its own (client and
// server allocations together).
func BenchmarkCallToolWireVsBare(b *testing.B) {
	_, url := newServer(b, nil)
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}
	run := func(b *testing.B, cs *mcp.ClientSession) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cs.CallTool(context.Background(), params); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("bare", func(b *testing.B) {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		run(b, cs)
	})
	b.Run("wire", func(b *testing.B) {
		s, err := httpsession.Open(context.Background(), httpsession.Options{Endpoint: url, Era: httpsession.Era2025, Stream: httpsession.StreamOff})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		run(b, s.ClientSession())
	})
}

// cannedAnswer is a base round-tripper that answers every request with a
// 200 of body: a text/event-stream carrying one response event for id 7,
// as a go-sdk server answers tools/call, or with json the response as an
// application/json body.
type cannedAnswer struct {
	body []byte
	json bool
}

func (c cannedAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	ct, n := "text/event-stream", int64(-1)
	if c.json {
		ct, n = "application/json", int64(len(c.body))
	}
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {ct}},
		Body:          io.NopCloser(bytes.NewReader(c.body)),
		ContentLength: n, Request: req,
	}, nil
}

// BenchmarkTransportAnswer measures the Transport's own work for one
// tools/call, with no network: reading the request's identity, the request
// copy, admitting the answer (an event stream: checking its one event and
// handing it on; JSON: reading and checking the body), and Close; text is
// the size of the result's text content.
func BenchmarkTransportAnswer(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	for _, c := range []struct {
		size int
		json bool
	}{{16, false}, {64 << 10, false}, {16, true}, {64 << 10, true}} {
		kind := "sse"
		if c.json {
			kind = "json"
		}
		b.Run(fmt.Sprintf("%s/text=%d", kind, c.size), func(b *testing.B) {
			result := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":%q}]}}`, strings.Repeat("x", c.size))
			answer := cannedAnswer{body: []byte("event: message\ndata: " + result + "\n\n")}
			if c.json {
				answer = cannedAnswer{body: []byte(result), json: true}
			}
			t := httpsession.NewTransport(httpsession.Config{Base: answer})
			buf := make([]byte, 128<<10)
			b.SetBytes(int64(len(result)))
			b.ReportAllocs()
			for b.Loop() {
				req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1/", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := t.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := resp.Body.Read(buf); err != nil {
						break
					}
				}
				_ = resp.Body.Close()
			}
		})
	}
}

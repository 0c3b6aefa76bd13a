package httpsession_test

import (
	"context"
	"net/http"
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

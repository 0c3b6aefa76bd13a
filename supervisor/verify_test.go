package supervisor

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
)

// logSignal is a slog.Handler that sends each record's message on ch,
// dropping it when ch is full.
type logSignal struct{ ch chan string }

func (l logSignal) Enabled(context.Context, slog.Level) bool { return true }
func (l logSignal) Handle(_ context.Context, r slog.Record) error {
	select {
	case l.ch <- r.Message:
	default:
	}
	return nil
}
func (l logSignal) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logSignal) WithGroup(string) slog.Handler      { return l }

// gatedPing is a ping answered once gate closes.
func gatedPing(gate chan struct{}) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// The late answer of an old session's verification ping does not end the
// verification of the session that replaced it: calls keep waiting for
// the new session's own answer.
func TestLateVerificationOfAnOldSessionKeepsTheNewOne(t *testing.T) {
	logs := make(chan string, 64)
	r := newRig(t, Config{Logger: slog.New(logSignal{ch: logs})})
	old, next := newFakeSession("s1", "a"), newFakeSession("s2", "a")
	gate1, gate2 := make(chan struct{}), make(chan struct{})
	old.pingFn, next.pingFn = gatedPing(gate1), gatedPing(gate2)
	r.ready(old)

	old.failNextCall(&classify.NotSentError{Err: io.EOF})
	_, err := r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.Error(t, err) // gen 1's verification waits for gate1
	old.die(io.EOF)       // meanwhile gen 1 dies by itself
	r.next().ok(next)
	r.until("ready on gen 2", func() bool { return r.sup.State() == Ready && r.sup.Generation() == 2 })
	next.failNextCall(&classify.NotSentError{Err: io.EOF})
	_, err = r.sup.CallTool(r.ctx, &mcp.CallToolParams{Name: "a"})
	require.Error(t, err) // gen 2's verification waits for gate2

	close(gate1) // gen 1's ping answers, late
	for msg := range logs {
		if msg == "mcpsup: dropped a late result of an old session" {
			break // the loop took the late answer
		}
	}
	errc := r.callAsync(r.ctx, "a")
	waiting := make(chan error, 1)
	go func() { waiting <- r.clock.BlockUntilContext(r.ctx, 2) }() // gen 1's release grace and the call's MaxCallWait
	sent := make(chan struct{})
	go func() {
		r.until("the call sent", func() bool { return len(next.toolCalls()) == 2 })
		close(sent)
	}()
	select {
	case <-sent:
		t.Fatal("the call went out while gen 2 was being verified")
	case err := <-waiting:
		require.NoError(t, err)
	}
	close(gate2)
	require.NoError(t, <-errc, "sent once gen 2 answered")
	<-sent
	require.Equal(t, uint64(2), r.sup.Generation())
}

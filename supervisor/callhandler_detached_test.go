package supervisor

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/internal/lockedbuf"
)

// detacher tags every call with a context its caller cannot cancel: one of
// its own (a tracer started from context.Background, say), or the caller's
// without its cancellation.
type detacher struct{ withoutCancel bool }

func (d detacher) TagCall(ctx context.Context, _ CallInfo) context.Context {
	if d.withoutCancel {
		return context.WithoutCancel(ctx)
	}
	return context.Background()
}
func (detacher) HandleCall(context.Context, CallStage) {}

// The caller's context bounds its call whatever the CallHandler tags it
// with: a TagCall that returns a context not derived from the caller's cut
// the call from the caller's cancellation, and a canceled call hung on a
// server that never answers.
func TestCallHandlerCannotDetachTheCall(t *testing.T) {
	for _, withoutCancel := range []bool{false, true} {
		var logs lockedbuf.Buffer
		r := newRig(t, Config{Observe: ObserveConfig{CallHandler: detacher{withoutCancel}, Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
		sess := newFakeSession("s1", "a")
		sess.callHang = true
		r.ready(sess)
		ctx, cancel := context.WithCancel(r.ctx)
		errc := r.callAsync(ctx, "a")
		r.until("the call sent", func() bool { return len(sess.toolCalls()) == 1 })
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled, "without cancel %v", withoutCancel)
		require.Contains(t, logs.String(), "not derived from the call's")
	}
}

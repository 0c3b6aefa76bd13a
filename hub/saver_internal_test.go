package hub

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/supervisor"
)

// savesByEndpoint is a Store that records the endpoint of every save and
// fails the first.
type savesByEndpoint struct {
	mu    sync.Mutex
	saved []string
}

func (s *savesByEndpoint) Load(context.Context, string) (*supervisor.ResumeState, error) {
	return nil, ErrNotFound
}
func (s *savesByEndpoint) Delete(context.Context, string) error { return nil }
func (s *savesByEndpoint) Save(_ context.Context, _ string, rs *supervisor.ResumeState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saved = append(s.saved, rs.Endpoint)
	if len(s.saved) == 1 {
		return errors.New("refused")
	}
	return nil
}

// Writes put while a failed write is being reported wait as one: the
// later replaces the earlier, which is never written (DESIGN.md section 8).
func TestSaverReplacesTheWaitingWriteWhileAFailureIsReported(t *testing.T) {
	st := &savesByEndpoint{}
	s := &saver{store: st, timeout: time.Minute, queues: map[string]*queue{}}
	s.failed = func(string, string, error) {
		s.put(context.Background(), "a", &supervisor.ResumeState{Endpoint: "superseded"}, nil)
		s.put(context.Background(), "a", &supervisor.ResumeState{Endpoint: "latest"}, nil)
	}
	s.put(context.Background(), "a", &supervisor.ResumeState{Endpoint: "first"}, nil)
	err := s.flush(context.Background(), "a")
	require.Error(t, err, "the first write's failure")
	st.mu.Lock()
	defer st.mu.Unlock()
	assert.Equal(t, []string{"first", "latest"}, st.saved)
}

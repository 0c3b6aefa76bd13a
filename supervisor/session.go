package supervisor

import (
	"context"

	seam "github.com/mcpsup/mcpsup/session"
)

// dialSpec is what one Dial or Attach needs besides the config.
type dialSpec struct {
	gen    uint64
	resume *ResumeState // Attach only
	// hooks into the supervisor, bound to this generation
	hooks *sessionHooks
}

// opener opens the loop's sessions: seamConnector; tests script their own.
type opener interface {
	// Dial opens a new session with a full handshake.
	Dial(ctx context.Context, spec dialSpec) (seam.Endable, error)
	// Attach re-attaches the persisted session spec.resume without a
	// handshake on the wire.
	Attach(ctx context.Context, spec dialSpec) (seam.Endable, error)
}

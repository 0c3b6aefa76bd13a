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

// opener opens the loop's sessions: seamConnector, over a transport's
// seam.Dialer; tests script their own. A session is Endable: the rules
// by which a failed request ends it (seam.Verify) end it.
type opener interface {
	// Dial opens a new session with a full handshake.
	Dial(ctx context.Context, spec dialSpec) (seam.Endable, error)
	// Attach re-attaches the persisted session spec.resume without a
	// handshake on the wire.
	Attach(ctx context.Context, spec dialSpec) (seam.Endable, error)
}

package fsm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpsup/mcpsup/events"
)

// Sentinel errors for errors.Is. Step returns them wrapped in the typed
// errors below; the machine is unchanged whenever Step returns an error.
var (
	// ErrRejected: the trigger is not permitted in the current state.
	ErrRejected = errors.New("fsm: trigger not permitted")
	// ErrStaleGeneration: the trigger answers an older session; dropped.
	ErrStaleGeneration = errors.New("fsm: trigger from an older generation")
	// ErrFutureGeneration: the trigger names a generation the machine has
	// not created; a bug in the shell.
	ErrFutureGeneration = errors.New("fsm: trigger from an unknown generation")
	// ErrMissingVerdict: a failure trigger carried no verdict.
	ErrMissingVerdict = errors.New("fsm: failure trigger without a verdict")
)

// RejectedError reports a (state, trigger) pair that the table does not
// permit: either no row exists for it, or none of its rows' guards passed.
type RejectedError struct {
	State   events.State
	Trigger events.Trigger
	// Guards lists, per row of this pair, its guard label; empty when the
	// table has no row for the pair.
	Guards []string
}

func (e *RejectedError) Error() string {
	if len(e.Guards) == 0 {
		return fmt.Sprintf("fsm: trigger %s not permitted in state %s", e.Trigger, e.State)
	}
	return fmt.Sprintf("fsm: trigger %s not permitted in state %s: no guard passed (%s)",
		e.Trigger, e.State, strings.Join(e.Guards, ", "))
}

// Is matches ErrRejected.
func (e *RejectedError) Is(target error) bool { return target == ErrRejected }

// GenerationError reports a trigger of generation Got, not the machine's
// Current one: ErrStaleGeneration when older, else ErrFutureGeneration.
type GenerationError struct {
	Trigger events.Trigger
	Got     uint64
	Current uint64
}

func (e *GenerationError) Error() string {
	return fmt.Sprintf("fsm: trigger %s of generation %d, current generation is %d", e.Trigger, e.Got, e.Current)
}

// Is matches ErrStaleGeneration or ErrFutureGeneration.
func (e *GenerationError) Is(target error) bool {
	if e.Got < e.Current {
		return target == ErrStaleGeneration
	}
	return target == ErrFutureGeneration
}

// VerdictError reports a failure trigger without a verdict (ErrMissingVerdict).
type VerdictError struct {
	Trigger events.Trigger
}

func (e *VerdictError) Error() string {
	return fmt.Sprintf("fsm: trigger %s requires a verdict", e.Trigger)
}

// Is matches ErrMissingVerdict.
func (e *VerdictError) Is(target error) bool { return target == ErrMissingVerdict }

// rejected builds the error for a (state, trigger) pair the table refuses.
func rejected(s events.State, k events.Trigger) *RejectedError {
	e := &RejectedError{State: s, Trigger: k}
	for _, i := range rowsOf(s, k) {
		e.Guards = append(e.Guards, table[i].GuardLabel())
	}
	return e
}

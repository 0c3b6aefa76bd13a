package classify

import (
	"errors"
	"reflect"
	"strings"
)

// ErrProtocol is wrapped by an error that reports a server breaking a bound
// of the protocol or of ours, found locally rather than in one answer (a
// list whose pagination does not end within its bounds): [Classify] reads
// an error wrapping it as protocol, as it reads a malformed answer.
var ErrProtocol = errors.New("classify: the server broke the protocol")

// sdkRoundsExceeded starts go-sdk's error when its client gives up on a
// call answered input_required round after round (v1.8.0 mcp/mrtr.go
// clientMultiRoundTripMiddleware), which it exports no value for: the one
// place its text is matched (DESIGN.md section 3).
const sdkRoundsExceeded = "multi-round-trip: exceeded maximum "

// textErrorType is errors.New's type, and go-sdk's give-up error's.
var textErrorType = reflect.TypeOf(errors.New(""))

// roundsExceeded reports whether err is go-sdk's multi-round-trip give-up
// (mrtr.mdx: the server kept answering input_required).
func roundsExceeded(err error) bool {
	return reflect.TypeOf(err) == textErrorType && strings.HasPrefix(err.Error(), sdkRoundsExceeded)
}

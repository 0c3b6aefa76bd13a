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

// sdkRoundsExceeded is the start of go-sdk's error when its client gives up
// on a call whose server answered input_required round after round
// (go-sdk v1.8.0 mcp/mrtr.go clientMultiRoundTripMiddleware: "exceeded
// maximum retries (10)", or "exceeded maximum load-shedding retries (3)"
// for rounds with an empty inputRequests). go-sdk exports no error value
// for it; this is the one place its text is matched.
const sdkRoundsExceeded = "multi-round-trip: exceeded maximum "

// textErrorType is the type of errors.New's and of fmt.Errorf's without %w,
// the type of go-sdk's give-up error.
var textErrorType = reflect.TypeOf(errors.New(""))

// roundsExceeded reports whether err is go-sdk's multi-round-trip give-up
// (mrtr.mdx: the server kept answering input_required).
func roundsExceeded(err error) bool {
	return reflect.TypeOf(err) == textErrorType && strings.HasPrefix(err.Error(), sdkRoundsExceeded)
}

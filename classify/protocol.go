package classify

import "errors"

// ErrProtocol is wrapped by an error that reports a server breaking a bound
// of the protocol or of ours, found locally rather than in one answer (a
// list whose pagination does not end within its bounds): [Classify] reads
// an error wrapping it as protocol, as it reads a malformed answer.
var ErrProtocol = errors.New("classify: the server broke the protocol")

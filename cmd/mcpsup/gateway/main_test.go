package gateway_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine of the gateway, its hub and the fixtures ends with the
// test that started it: Close and Detach wait for theirs.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

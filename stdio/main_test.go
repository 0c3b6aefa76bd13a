package stdio

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpsup/mcpsup/internal/stdiotest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(stdiotest.WithServer(m)) }

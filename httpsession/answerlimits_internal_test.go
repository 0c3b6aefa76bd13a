package httpsession

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAnswerLimitsReachTheTransport: every limit reaches its Config
// field, and the zero value leaves the Transport's defaults.
func TestAnswerLimitsReachTheTransport(t *testing.T) {
	var zero Config
	AnswerLimits{}.apply(&zero)
	assert.Equal(t, Config{}, zero, "zero: the Transport's defaults")
	var c Config
	AnswerLimits{JSON: 1, ErrorBody: 2, SSEEvent: 3, JSONValues: 4, Messages: 5, ContentBlocks: 6, InputRequestObjects: 7}.apply(&c)
	assert.Equal(t, 1, c.MaxJSONBody)
	assert.Equal(t, 2, c.MaxErrorBody)
	assert.Equal(t, 3, c.MaxSSEEvent)
	assert.Equal(t, 4, c.MaxJSONValues)
	assert.Equal(t, 5, c.MaxMessages)
	assert.Equal(t, 6, c.MaxContentBlocks)
	assert.Equal(t, 7, c.MaxInputRequestObjects)
}

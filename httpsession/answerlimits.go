package httpsession

import "github.com/mcpsup/mcpsup/msgcheck"

// AnswerLimits bound what is read of the server's answers, for a
// [Dialer]'s sessions (and a stdio server's messages, by [MessageLimits]);
// each is the [Config] field of its name (Max...), documented there. Past a
// limit the request fails alone and the session lives (DESIGN.md section
// 7, Bounds). The zero value, and every zero field, is the default.
type AnswerLimits struct {
	JSON                int // bytes; default 16 MiB
	ErrorBody           int // bytes; default 64 KiB
	SSEEvent            int // bytes; default 16 MiB (the standalone stream's: [StreamConfig.MaxEventBytes])
	JSONValues          int // default 1,048,576
	Messages            int // default 10,000
	ContentBlocks       int // default 10,000
	InputRequestObjects int // default 1,000
}

// apply sets c's bounds to l's.
func (l AnswerLimits) apply(c *Config) {
	c.MaxJSONBody, c.MaxErrorBody, c.MaxSSEEvent = l.JSON, l.ErrorBody, l.SSEEvent
	c.MaxJSONValues, c.MaxMessages, c.MaxContentBlocks = l.JSONValues, l.Messages, l.ContentBlocks
	c.MaxInputRequestObjects = l.InputRequestObjects
}

// MessageLimits are l's bounds on what go-sdk decodes of one message, with
// maxItems for a list page, defaults applied: what a transport that reads
// messages apart from HTTP (stdio) holds them to.
func (l AnswerLimits) MessageLimits(maxItems int) msgcheck.Limits {
	return msgcheck.Limits{ListItems: maxItems, JSONValues: l.JSONValues, Messages: l.Messages,
		ContentBlocks: l.ContentBlocks, InputRequestObjects: l.InputRequestObjects}.WithDefaults()
}

package httpsession

import "github.com/mcpsup/mcpsup/msgcheck"

// AnswerLimits bound what is read of the server's answers to requests
// (failure story S4's hostile answers), for a [Dialer]'s sessions. Past a
// limit the request fails alone with a protocol verdict (or, for an error body, its status's class) and
// the session lives; nothing is buffered beyond it. Each limit counts bytes
// on the wire and, separately, after gzip decoding. The zero value, and
// every zero field, is the default.
type AnswerLimits struct {
	// JSON bounds a 2xx application/json answer. Default 16 MiB.
	JSON int
	// ErrorBody bounds a non-2xx (or 3xx) body of any status, and any body
	// answering a notification or a response. Default 64 KiB.
	ErrorBody int
	// SSEEvent bounds one event of a text/event-stream answer to a
	// request. Default 16 MiB (go-sdk's mcp.DefaultMaxEventSize). The
	// standalone stream's events are bounded by [StreamConfig.MaxEventBytes].
	SSEEvent int
	// JSONValues bounds the JSON values of one message of an answer
	// (every object and array, and every element or member after the
	// first of each), which go-sdk decodes at some 100 bytes a value at
	// worst. Default 1,048,576 (msgcheck.DefaultMaxJSONValues). A stdio
	// server's messages are held to it too: a response past it is answered
	// in the server's place with a JSON-RPC error naming the bound (code
	// [CodeHTTPAnswer]), a request or notification past it is dropped
	// and reported as a stdout-line-dropped event.
	JSONValues int
	// Messages bounds the messages of a prompts/get result and of a
	// sampling/createMessage request of the server's, which go-sdk decodes
	// at some 30 KiB allocated each. Default 10,000
	// (msgcheck.DefaultMaxMessages). Past it a call fails alone, and a request
	// is dropped (over stdio too, as for JSONValues).
	Messages int
	// ContentBlocks bounds the content blocks of a tools/call result and
	// the contents of a resources/read result, which go-sdk decodes at
	// some 500 bytes each. Default 10,000 (msgcheck.DefaultMaxContentBlocks).
	// Past it the call fails alone (over stdio too).
	ContentBlocks int
	// InputRequestObjects bounds the JSON objects of a result's
	// inputRequests, which go-sdk decodes whole, a sampling request's
	// messages at some 64 KiB each. Default 1,000
	// (msgcheck.DefaultMaxInputRequestObjects). Past it the call fails alone
	// (over stdio too).
	InputRequestObjects int
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

package events_test

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// A logger whose records never carry a session id or a credential: the
// session id is hashed where go-sdk names it and under a session id key, the
// endpoint's userinfo and token are masked.
func ExampleRedactingHandler() {
	var r events.Redactor
	plain := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // stable output for the example
			}
			return a
		},
	})
	log := slog.New(events.RedactingHandler(&r, plain))
	log.Warn("keepalive ping failed (session ID: 7f3c2a9b)",
		"endpoint", "https://user:pass@mcp.example.com/mcp?token=abc", "session_id", "7f3c2a9b")
	// Output: level=WARN msg="keepalive ping failed (session ID: sid:701bab5e)" endpoint="https://[redacted]@mcp.example.com/mcp?token=[redacted]" session_id=sid:701bab5e
}

// A supervisor registers each session's id while it is in use and forgets it
// when the session is released: the Redactor holds only the ids in use, and a
// forgotten id is still hashed where go-sdk names it.
func ExampleRedactor_ForgetSessionID() {
	var r events.Redactor
	id := "0b8f2c51e4a94f0d"
	r.AddSessionID(id)
	fmt.Println(r.Text("resuming " + id))
	r.ForgetSessionID(id)
	fmt.Println(r.SessionIDs(), r.Text("resuming "+id))
	fmt.Println(r.Text("failed to connect (session ID: " + id + "): session not found"))
	// Output:
	// resuming sid:0ccae939
	// 0 resuming 0b8f2c51e4a94f0d
	// failed to connect (session ID: sid:0ccae939): session not found
}

// A host registers its own credential; the verdict of a failed call is
// redacted in its free text only, its class and method stay as they are.
func ExampleRedactor_Verdict() {
	var r events.Redactor
	r.AddSecret("s3cr3t-t0ken")
	v := r.Verdict(classify.Verdict{Class: classify.Forbidden, HTTPStatus: 403, Method: "tools/call",
		Detail: `POST tools/call: HTTP 403: proxy refused key s3cr3t-t0ken`})
	fmt.Println(v.Class, v.Method, v.Detail)
	// Output: forbidden tools/call POST tools/call: HTTP 403: proxy refused key [redacted]
}

package supervisor_test

import (
	"errors"
	"fmt"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/supervisor"
)

// A host decides whether to send a failed call again from the error alone:
// a request that never left may be resent; one whose outcome is unknown only
// if the tool was annotated readOnlyHint or idempotentHint; an answered one
// only if the server refused it for its session (session-expired: it never
// ran), else it is a question for its verdict, not for delivery.
func ExampleCallError_Resendable() {
	for _, err := range []error{
		&supervisor.CallError{Op: "tools/call", Name: "search", Delivery: supervisor.NotSent},
		&supervisor.CallError{Op: "tools/call", Name: "send-mail", Delivery: supervisor.OutcomeUnknown},
		&supervisor.CallError{Op: "tools/call", Name: "search", Delivery: supervisor.Answered,
			Verdict: classify.Verdict{Class: classify.ServerError, HTTPStatus: 500}},
		&supervisor.CallError{Op: "tools/call", Name: "send-mail", Delivery: supervisor.Answered,
			Verdict: classify.Verdict{Class: classify.SessionExpired, HTTPStatus: 404}},
	} {
		var ce *supervisor.CallError
		if errors.As(err, &ce) {
			fmt.Println(ce.Name, ce.Delivery, ce.Verdict.Class, "resendable:", ce.Resendable())
		}
	}
	// Output:
	// search not-sent none resendable: true
	// send-mail outcome-unknown none resendable: false
	// search answered server-error resendable: false
	// send-mail answered session-expired resendable: true
}

package supervisor_test

import (
	"errors"
	"fmt"

	"github.com/mcpsup/mcpsup/supervisor"
)

// A host decides whether to send a failed call again from the error alone:
// a request that never left may be resent; one whose outcome is unknown only
// if the tool was annotated readOnlyHint or idempotentHint; an answered one
// is a question for its verdict, not for delivery.
func ExampleCallError_Resendable() {
	for _, err := range []error{
		&supervisor.CallError{Op: "tools/call", Name: "search", Delivery: supervisor.NotSent},
		&supervisor.CallError{Op: "tools/call", Name: "send-mail", Delivery: supervisor.OutcomeUnknown},
		&supervisor.CallError{Op: "tools/call", Name: "search", Delivery: supervisor.Answered},
	} {
		var ce *supervisor.CallError
		if errors.As(err, &ce) {
			fmt.Println(ce.Name, ce.Delivery, "resendable:", ce.Resendable())
		}
	}
	// Output:
	// search not-sent resendable: true
	// send-mail outcome-unknown resendable: false
	// search answered resendable: false
}

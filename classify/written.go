package classify

// WrittenError is the error of a request that was written whole to a
// stream transport (a stdio server's stdin) and got no answer: the server
// may have read and run it. [DeliveryOf] takes it as outcome unknown; it
// says nothing about the class. Its text is Err's.
type WrittenError struct {
	Err error
}

// Error returns Err's text.
func (e *WrittenError) Error() string {
	if e == nil || e.Err == nil {
		return "request written, no answer"
	}
	return e.Err.Error()
}

// Unwrap returns Err (nil for a nil *WrittenError).
func (e *WrittenError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

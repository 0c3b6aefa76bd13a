package classify

// WrittenError is the error of a request written whole to a stream
// transport (stdio) that got no answer: outcome unknown to [DeliveryOf], no
// fact for the class. Its text is Err's.
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

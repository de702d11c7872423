package wss

import "errors"

// reasonOf is the Reason of a security failure, or 0 for any other error:
// the reason the gateway logs and counts for err.
func reasonOf(err error) Reason {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Reason
	}
	return 0
}

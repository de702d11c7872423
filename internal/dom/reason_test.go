package dom

import (
	"errors"
	"github.com/wssgw/wssgw/internal/wss"
)

// reasonOf is the Reason of a security failure, or 0 for any other error:
// the reason the gateway logs and counts for err.
func reasonOf(err error) wss.Reason {
	if e, ok := errors.AsType[*wss.Error](err); ok {
		return e.Reason
	}
	return 0
}

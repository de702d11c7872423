package xmlscan

import "errors"

// kinds returns every Kind in the closed set, in order.
func kinds() []Kind {
	ks := make([]Kind, 0, int(kindEnd)-1)
	for k := KindSyntax; k < kindEnd; k++ {
		ks = append(ks, k)
	}
	return ks
}

// kindOf returns the Kind of an error returned by this package, or 0 (whose
// String is "unknown") for any other error, including nil.
func kindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

package mime

import "errors"

// The errors of this package. Every error about the input wraps one of
// them (with %w) together with a detail naming the part and the limit or
// rule; spool I/O errors and invalid Limits are the gateway's own faults
// and wrap none.
// The gateway maps all of them to its uniform fault; the sentinel is the
// closed set its logs and metrics use.
var (
	// ErrMalformed: the package or a part header breaks MIME syntax or a
	// rule of this package (no boundary, bad Content-ID, root type
	// mismatch, junk after a delimiter ...).
	ErrMalformed = errors.New("mime: malformed package")
	// ErrLimit: a Limits bound was exceeded.
	ErrLimit = errors.New("mime: limit exceeded")
	// ErrTruncated: the input ended (or failed) before the close
	// delimiter: a client abort or a cut stream.
	ErrTruncated = errors.New("mime: truncated package")
	// ErrEncoding: a Content-Transfer-Encoding other than binary, 8bit or
	// 7bit.
	ErrEncoding = errors.New("mime: unsupported transfer encoding")
	// ErrDuplicateID: two parts with the same Content-ID.
	ErrDuplicateID = errors.New("mime: duplicate Content-ID")
	// ErrMissingPart: a part named by the start parameter or by a cid:
	// reference is not in the package.
	ErrMissingPart = errors.New("mime: missing part")
	// ErrReference: a bad cid: URL or xop:Include, an attachment referenced
	// twice, or one not referenced at all (security.md C7).
	ErrReference = errors.New("mime: bad attachment reference")
	// ErrPlacement: an xop:Include that is not empty or not the whole
	// content of its parent; it always comes with ErrReference, and lets
	// the DOM engine report it as a structure fault.
	ErrPlacement = errors.New("mime: xop:Include out of place")
	// ErrClosed: the Package was closed.
	ErrClosed = errors.New("mime: package closed")
)

package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sync"

	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/wss"
)

// secureMultipart verifies an MTOM/SwA package on a secured route
// (DESIGN.md §5.4): the whole package is read (attachments spooled past the
// threshold), the root verified together with its attachments, and the
// request body replaced by the re-assembled package: the plaintext root
// the policy produced and the attachments minus the consumed ciphertext
// parts, streamed from the spool. The spool is removed on every path: here
// on an error, else when the backend's transport closes the body or the
// request ends, whichever comes first.
func (s *security) secureMultipart(ctx context.Context, r *http.Request, body io.Reader, rm *metrics.RouteMetrics, v soap.Version) (*wss.Result, error) {
	pkg, err := readPackage(ctx, r, body, s.mime)
	if err != nil {
		return nil, s.packageError(err)
	}
	v = rootVersion(pkg, v)
	atts := wss.PackageAttachments(pkg, "")
	engine, ok := s.engine.(wss.AttachmentEngine)
	if !ok {
		_ = pkg.Close()
		return nil, s.reject(fmt.Errorf("gateway: engine %T cannot verify attachments", s.engine))
	}
	res, root, err := s.policy.VerifyAttachments(ctx, engine, pkg.RootBytes, atts, s.now())
	s.observe(rm, res)
	if err != nil {
		_ = pkg.Close()
		return res, s.reject(err)
	}
	if err := s.checkForwarded(res, pkg.RootBytes, v, rm); err != nil {
		_ = pkg.Close()
		return res, err
	}
	if res != nil {
		dropConsumed(pkg, res.Consumed)
	}
	sendPackage(r, pkg, root)
	return res, nil
}

// readPackage reads a whole MTOM/SwA package for a secured or a gated
// route and applies the one-charset rule to its root part.
func readPackage(ctx context.Context, r *http.Request, body io.Reader, lim wmime.Limits) (*wmime.Package, error) {
	pkg, err := wmime.Read(ctx, body, r.Header.Get("Content-Type"), lim)
	if err != nil {
		return nil, readError(body, err)
	}
	if err := soap.CheckCharset(pkg.Root.ContentType()); err != nil {
		_ = pkg.Close()
		return nil, fmt.Errorf("gateway: root part: %w", err)
	}
	return pkg, nil
}

// rootVersion is the SOAP version a package's root part announces: its
// media type (SwA) or its type parameter (XOP 1.0 §4.1, SOAP MTOM §3.2),
// which mime.Read checked against the package's type and start-info. A
// package without start-info announces its version only there.
func rootVersion(pkg *wmime.Package, announced soap.Version) soap.Version {
	ct := pkg.Root.ContentType()
	if media, params, err := mime.ParseMediaType(ct); err == nil && media == wmime.TypeXOP {
		ct = params["type"]
	}
	if kind, v := soap.Classify(ct); kind == soap.Envelope {
		return v
	}
	return announced
}

// sendPackage makes pkg, with root as its root part, r's body for the
// backend.
func sendPackage(r *http.Request, pkg *wmime.Package, root []byte) {
	ctype, w := pkg.Writer(root)
	b := newPackageBody(pkg, w)
	// The server cancels the request context once the handler returns: a
	// body the transport never opened (the client left first) still goes.
	context.AfterFunc(r.Context(), func() { _ = b.Close() })
	r.Body, r.ContentLength = b, -1
	r.Header.Del("Content-Length")
	r.Header.Del("Transfer-Encoding")
	r.Header.Set("Content-Type", ctype)
}

// packageError answers a malformed package with the uniform security
// fault.
func (s *security) packageError(err error) error {
	var bad *badPackageError
	if errors.As(err, &bad) {
		return s.reject(wss.Wrap(wss.ReasonMalformed, bad.err, "gateway: multipart package"))
	}
	return err
}

// badPackageError is a package mime.Read refused as malformed.
type badPackageError struct{ err error }

func (e *badPackageError) Error() string { return "gateway: multipart package: " + e.err.Error() }
func (e *badPackageError) Unwrap() error { return e.err }

// readError maps a failed mime.Read to the gateway's answers: the route's
// body limit and mime.ErrLimit are 413 like an oversize envelope, a failed
// read from the client is the client's (400, 408, or nothing when it left),
// and everything else (malformed, truncated, duplicate Content-ID, bad
// transfer encoding) is a badPackageError, which a secured route answers
// with the uniform security fault, since a package two parsers split
// differently is an attack (security.md C7).
func readError(body io.Reader, err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return tooLarge
	}
	if errors.Is(err, wmime.ErrLimit) {
		return &mimeLimitError{err: err}
	}
	if cb, ok := body.(interface{ readErr() error }); ok && cb.readErr() != nil {
		// The read error decides the answer (slow, aborted); the
		// parser's view of the cut package is for the log.
		return &clientBodyError{fmt.Errorf("%w (%w)", cb.readErr(), err)}
	}
	return &badPackageError{err}
}

// mimeLimitError is a package over a mime limit; it is answered like a
// body over maxBodyBytes (413).
type mimeLimitError struct{ err error }

func (e *mimeLimitError) Error() string { return "gateway: " + e.err.Error() }
func (e *mimeLimitError) Unwrap() []error {
	return []error{e.err, &http.MaxBytesError{}}
}

// dropConsumed removes the parts whose ciphertext the Security header
// consumed (an xop:Include in a CipherValue): the backend gets the
// plaintext in the root, never the ciphertext part.
func dropConsumed(pkg *wmime.Package, consumed []string) {
	if len(consumed) == 0 {
		return
	}
	pkg.Attachments = slices.DeleteFunc(pkg.Attachments, func(p *wmime.Part) bool {
		return slices.Contains(consumed, p.ContentID())
	})
}

// packageBody is the request body for the backend: a goroutine writes the
// package into a pipe. Close stops the writer, waits for it, and only then
// removes the spool, so no spool file is removed under a reader; it runs
// once, from the transport or from the request's end.
type packageBody struct {
	*io.PipeReader
	pkg  *wmime.Package
	done chan struct{}
	once sync.Once
}

func newPackageBody(pkg *wmime.Package, w io.WriterTo) *packageBody {
	pr, pw := io.Pipe()
	b := &packageBody{PipeReader: pr, pkg: pkg, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		_, err := w.WriteTo(pw)
		pw.CloseWithError(err) // nil: io.EOF for the reader
	}()
	return b
}

func (b *packageBody) Close() error {
	b.once.Do(func() {
		_ = b.PipeReader.Close() // a blocked WriteTo fails with io.ErrClosedPipe
		<-b.done
		_ = b.pkg.Close()
	})
	return nil
}

package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

var errResponseEncrypted = errors.New("encryptForRequester cannot encrypt an MTOM/SwA response in buffered mode")

// bufferedPackage signs an MTOM response with a standard WS-Security
// header (issue 15): the root part, held in memory and bounded like a
// buffered envelope, gets the Security header; its Body digest covers the
// XOP infoset, each xop:Include expanded to its part's base64, which is
// how WSS4J and the project's DOM engine verify MTOM on receipt. The
// attachments are spooled (mime.Read, responses use the mime limits) and
// re-emitted unchanged after the signed root, so memory stays bounded by
// the root and the spool threshold, not by the package.
//
// Every attachment must be named by an xop:Include inside the Body: a part
// that nothing signed would reach the partner looking as trusted as the
// rest. An SwA package (type text/xml or application/soap+xml) gets one
// cid: Reference per attachment with the
// Attachment-Content-Signature-Transform instead (SwA Profile 1.1 §5), as
// WSS4J verifies it.
func (rs *responder) bufferedPackage(rt *route, resp *http.Response) error {
	lim := rs.mime
	lim.MaxRootSize = min(lim.MaxRootSize, int64(rs.cfg.MaxBufferedSize))
	pkg, err := wmime.Read(resp.Request.Context(), resp.Body, resp.Header.Get("Content-Type"), lim)
	resp.Body.Close()
	if err != nil {
		if packageFault(err) {
			return rs.failed(rt, &responseError{fmt.Errorf("multipart response: %w", err)})
		}
		return &backendError{err}
	}
	out, err := rs.signPackage(rt, pkg, requesterOf(resp.Request))
	if err != nil {
		_ = pkg.Close()
		return rs.failed(rt, &responseError{err})
	}
	rs.count(rt, metrics.ResponseSigned)
	ctype, w := pkg.Writer(out)
	resp.Body = newPackageBody(pkg, w) // Close removes the spool
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	resp.Header.Set("Content-Type", ctype)
	return nil
}

// packageFault reports whether err is the package's fault rather than a
// failed read from the backend.
func packageFault(err error) bool {
	for _, e := range []error{wmime.ErrMalformed, wmime.ErrLimit, wmime.ErrEncoding, wmime.ErrDuplicateID, wmime.ErrMissingPart, wmime.ErrReference} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// signPackage checks pkg's root and references and returns the signed
// root part.
func (rs *responder) signPackage(rt *route, pkg *wmime.Package, req *requester) ([]byte, error) {
	if err := soap.CheckCharset(pkg.Root.ContentType()); err != nil {
		return nil, fmt.Errorf("root part: %w", err)
	}
	// ResolveXOP (inside) refuses any xop:Include in an SwA package.
	if err := rs.checkIncludes(pkg); err != nil {
		return nil, err
	}
	o, err := rs.options(req, rs.cfg.EncryptForRequester)
	if err != nil {
		return nil, err
	}
	if o.EncryptFor != nil {
		return nil, errResponseEncrypted
	}
	o.SetPackage(pkg, int64(rs.cfg.MaxBufferedSize))
	start := time.Now()
	out, err := signer.Secure(pkg.RootBytes, o)
	rt.metrics.Stage(metrics.StageSign, time.Since(start))
	return out, err
}

// checkIncludes applies mime.CheckSigned, the rule egress requests
// share, to the root part scanned by the response gate.
func (rs *responder) checkIncludes(pkg *wmime.Package) error {
	var d xmlscan.Document
	if err := rs.gate.Scan(pkg.RootBytes, &d); err != nil {
		return fmt.Errorf("root part: %w", err)
	}
	return wmime.CheckSigned(&d, pkg)
}

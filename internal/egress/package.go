package egress

import (
	"errors"
	"fmt"

	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// SecurePackage secures the root part of the legacy client's MTOM or SwA
// request the way buffered response signing secures a package (issue 15):
// for MTOM the Body's digest covers its XOP infoset, each xop:Include
// counted as its part's base64, as a stock receiver (WSS4J/CXF) verifies
// it; for SwA each part gets a cid: Reference with the
// Attachment-Content-Signature-Transform. The parts go out unchanged.
// Every MTOM attachment must be included from inside the Body, since a
// part nothing signs would reach the partner looking as trusted as the
// rest. Encrypting a package is not supported (signer.Options.XOP): a
// route that encrypts refuses it with ErrRequest.
func (c *Client) SecurePackage(pkg *mime.Package) (*Request, error) {
	if c.partner != nil {
		return nil, fmt.Errorf("%w: encrypting an MTOM/SwA request is not supported (egress.encrypt)", ErrRequest)
	}
	var d xmlscan.Document
	if err := c.gate.Scan(pkg.RootBytes, &d); err != nil {
		return nil, fmt.Errorf("%w: root part: %w", ErrRequest, err)
	}
	if err := mime.CheckSigned(&d, pkg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRequest, err)
	}
	o, err := c.options()
	if err != nil {
		return nil, err
	}
	o.SetPackage(pkg, c.mime.MaxRootSize)
	out, err := signer.Secure(pkg.RootBytes, o)
	switch {
	case errors.Is(err, signer.ErrEnvelope) || errors.Is(err, signer.ErrSecured):
		return nil, fmt.Errorf("%w: %w", ErrRequest, err)
	case err != nil:
		return nil, fmt.Errorf("egress: secure: %w", err)
	}
	sv, err := c.signatureValue(out)
	if err != nil {
		return nil, err
	}
	return &Request{Body: out, SignatureValue: sv}, nil
}

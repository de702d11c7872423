package wss

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

var errCID = errors.New("wss: not a cid: URL")

// CIDFromURL returns the Content-ID a "cid:" URL of an SwA Reference or an
// xop:Include names (RFC 2392 §2: the scheme is case-insensitive and the
// addr-spec is %-encoded). Any other URL (http:, file:, relative) is
// refused: attachments are the only external content a message may name,
// and nothing is fetched (DESIGN.md §5.8). It is laxer than
// mime.CIDFromURL on the Content-ID grammar: the part must exist anyway,
// and mime.Read admits only well-formed ids. Both engines resolve every
// cid: URL of a message with it, so they name the same part.
func CIDFromURL(href string) (string, error) {
	if len(href) < 5 || !strings.EqualFold(href[:4], "cid:") {
		return "", errCID
	}
	cid, err := url.PathUnescape(href[4:])
	if err != nil || cid == "" {
		return "", fmt.Errorf("%w: bad %%-encoding or empty", errCID)
	}
	return cid, nil
}

// MaxTokenPart bounds a BinarySecurityToken held in a MIME part (WSS4J
// storeBytesInAttachment): a certificate, or an X509PKIPathv1 of a few of
// them, is a few KiB; the token is parsed whole, so its part is never read
// unbounded.
const MaxTokenPart = 256 << 10

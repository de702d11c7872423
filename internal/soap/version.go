package soap

import (
	"mime"
	"strings"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Version is a SOAP envelope version.
type Version uint8

const (
	// V11 is SOAP 1.1 (text/xml).
	V11 Version = iota
	// V12 is SOAP 1.2 (application/soap+xml).
	V12
)

// Namespaces of the envelope element, defined once in xmlscan, whose gate
// restricts the Envelope and Header content.
const (
	NS11 = xmlscan.NamespaceSOAP11
	NS12 = xmlscan.NamespaceSOAP12
)

func (v Version) String() string {
	if v == V12 {
		return "1.2"
	}
	return "1.1"
}

// ContentType is the Content-Type of a plain envelope of this version.
func (v Version) ContentType() string {
	if v == V12 {
		return "application/soap+xml; charset=utf-8"
	}
	return "text/xml; charset=utf-8"
}

// Kind is what a request's Content-Type announces.
type Kind uint8

const (
	// Unsupported is anything that is not a SOAP envelope or an MTOM/SwA package.
	Unsupported Kind = iota
	// Envelope is a plain SOAP envelope.
	Envelope
	// Multipart is a multipart/related package (MTOM/XOP or SwA).
	Multipart
)

// Classify reports what the Content-Type announces and its SOAP version.
// For an unsupported type the version is a best guess for the Fault.
//
// The common types are matched without allocating: this runs on every
// request, and mime.ParseMediaType is only needed for multipart parameters.
func Classify(contentType string) (Kind, Version) {
	media := contentType
	if i := strings.IndexByte(media, ';'); i >= 0 {
		media = media[:i]
	}
	media = strings.TrimSpace(media)
	switch {
	case strings.EqualFold(media, "text/xml"):
		return Envelope, V11
	case strings.EqualFold(media, "application/soap+xml"):
		return Envelope, V12
	case strings.EqualFold(media, "multipart/related"):
		return Multipart, multipartVersion(contentType)
	}
	return Unsupported, GuessVersion(contentType)
}

// multipartVersion reads the root part's type from the package parameters:
// XOP packages name it in start-info, SwA packages in type.
func multipartVersion(contentType string) Version {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return GuessVersion(contentType)
	}
	root := params["type"]
	if strings.EqualFold(root, "application/xop+xml") {
		root = params["start-info"]
	}
	if mt, _, _ := mime.ParseMediaType(root); mt == "application/soap+xml" {
		return V12
	}
	return V11
}

// GuessVersion picks the Fault version for a request whose type is not
// usable: 1.2 only if the header mentions the SOAP 1.2 media type.
func GuessVersion(contentType string) Version {
	if strings.Contains(strings.ToLower(contentType), "application/soap+xml") {
		return V12
	}
	return V11
}

package xmlscan

import "strconv"

// Kind classifies a rejection. The set is closed: every error the gate
// returns carries one of the constants below, and Kind.String gives a
// stable lowercase_with_underscores label for metrics (the gateway maps all
// of them to one uniform SOAP fault; the kind only goes to logs and metrics).
//
// A Kind is also an error, so callers can test with
// errors.Is(err, xmlscan.KindDoctype). Being an error, a Kind prints as
// "xmlscan: doctype" with fmt; call String for the bare label.
type Kind uint8

// The kinds of rejection. Their numeric values are not stable; use the
// constants or String.
const (
	// KindSyntax: malformed markup not covered by a more specific kind
	// (missing '=', unquoted value, "--" inside a comment, bad end tag ...).
	KindSyntax Kind = iota + 1
	// KindEOF: the input ends inside markup or with elements still open.
	KindEOF
	// KindInvalidUTF8: the bytes are not well-formed UTF-8.
	KindInvalidUTF8
	// KindIllegalChar: a character (literal or referenced) outside the
	// XML 1.0 Char production (§2.2).
	KindIllegalChar
	// KindEncoding: the XML declaration names an encoding other than UTF-8,
	// or the bytes look like UTF-16/UTF-32 without a BOM.
	KindEncoding
	// KindBOM: a byte order mark other than UTF-8's.
	KindBOM
	// KindXMLDecl: a malformed XML declaration, or a version other than 1.0.
	KindXMLDecl
	// KindDoctype: a document type declaration (<!DOCTYPE ...>).
	KindDoctype
	// KindDirective: any other markup declaration (<!ENTITY, <!ELEMENT, ...).
	KindDirective
	// KindPI: a processing instruction, including an XML declaration that
	// is not at the start of the document.
	KindPI
	// KindNoRoot: the document has no root element.
	KindNoRoot
	// KindMultipleRoots: a second top-level element.
	KindMultipleRoots
	// KindOutsideRoot: text, a comment or CDATA outside the root element.
	KindOutsideRoot
	// KindTagMismatch: an end tag that does not match the open element
	// (XML 1.0 WFC: Element Type Match), or an end tag with nothing open.
	KindTagMismatch
	// KindDuplicateAttr: two attributes with the same name or the same
	// expanded name (XML 1.0 WFC: Unique Att Spec; Namespaces in XML 1.0 §6.3).
	KindDuplicateAttr
	// KindInvalidName: a name that is not an XML Name, or a QName that is
	// not PrefixedName | UnprefixedName (Namespaces in XML 1.0 §4).
	KindInvalidName
	// KindUndeclaredPrefix: a prefix with no namespace binding in scope
	// (Namespaces in XML 1.0 §5, NSC: Prefix Declared).
	KindUndeclaredPrefix
	// KindReservedNamespace: a declaration of xmlns, a binding of xml to
	// another URI, a binding of the xml or xmlns namespace names, or an
	// element with the xmlns prefix (Namespaces in XML 1.0 §3).
	KindReservedNamespace
	// KindInvalidNamespace: xmlns:p="" (undeclaring a prefix is not allowed
	// in Namespaces in XML 1.0, NSC: No Prefix Undeclaring) or a namespace
	// name containing whitespace.
	KindInvalidNamespace
	// KindBadReference: an entity reference other than the five predefined
	// ones, a malformed character reference, or a bare '&'.
	KindBadReference
	// KindLtInAttr: a literal '<' in an attribute value (XML 1.0 WFC: No < in
	// Attribute Values).
	KindLtInAttr
	// KindCDATAEnd: the sequence "]]>" in character data (XML 1.0 §2.4).
	KindCDATAEnd
	// KindProtectedComment: a comment inside an element listed in
	// Config.NoCommentsIn.
	KindProtectedComment
	// KindProtectedCDATA: a CDATA section inside an element listed in
	// Config.NoCommentsIn.
	KindProtectedCDATA
	// KindElementOnly: character data other than white space, a
	// reference, a CDATA section or a comment directly inside an element
	// listed in Config.ElementOnly.
	KindElementOnly

	// KindLimitBytes and the kinds below: a Limits field was exceeded.
	KindLimitBytes
	KindLimitDepth
	KindLimitAttrs
	KindLimitNameLen
	KindLimitNSDeclsPerElement
	KindLimitNSDecls
	KindLimitText
	KindLimitAttrValue
	KindLimitElements
	KindLimitBase64
	KindLimitReferences
	KindLimitTransforms
	KindLimitSignatures
	KindLimitEncryptedKeys
	KindLimitEncryptedData

	kindEnd // sentinel, not a kind
)

var kindNames = [...]string{
	KindSyntax:                 "syntax",
	KindEOF:                    "unexpected_eof",
	KindInvalidUTF8:            "invalid_utf8",
	KindIllegalChar:            "illegal_char",
	KindEncoding:               "unsupported_encoding",
	KindBOM:                    "unsupported_bom",
	KindXMLDecl:                "bad_xml_declaration",
	KindDoctype:                "doctype",
	KindDirective:              "directive",
	KindPI:                     "processing_instruction",
	KindNoRoot:                 "no_root",
	KindMultipleRoots:          "multiple_roots",
	KindOutsideRoot:            "content_outside_root",
	KindTagMismatch:            "mismatched_end_tag",
	KindDuplicateAttr:          "duplicate_attribute",
	KindInvalidName:            "invalid_name",
	KindUndeclaredPrefix:       "undeclared_prefix",
	KindReservedNamespace:      "reserved_namespace",
	KindInvalidNamespace:       "invalid_namespace",
	KindBadReference:           "invalid_reference",
	KindLtInAttr:               "lt_in_attribute",
	KindCDATAEnd:               "cdata_end_in_text",
	KindProtectedComment:       "comment_in_protected",
	KindProtectedCDATA:         "cdata_in_protected",
	KindElementOnly:            "content_in_element_only",
	KindLimitBytes:             "limit_bytes",
	KindLimitDepth:             "limit_depth",
	KindLimitAttrs:             "limit_attributes",
	KindLimitNameLen:           "limit_name_length",
	KindLimitNSDeclsPerElement: "limit_ns_decls_per_element",
	KindLimitNSDecls:           "limit_ns_decls",
	KindLimitText:              "limit_text_length",
	KindLimitAttrValue:         "limit_attr_value_length",
	KindLimitElements:          "limit_elements",
	KindLimitBase64:            "limit_base64_length",
	KindLimitReferences:        "limit_references",
	KindLimitTransforms:        "limit_transforms",
	KindLimitSignatures:        "limit_signatures",
	KindLimitEncryptedKeys:     "limit_encrypted_keys",
	KindLimitEncryptedData:     "limit_encrypted_data",
}

// String returns the metric label of k: lowercase_with_underscores, or
// "unknown" for a value outside the closed set.
func (k Kind) String() string {
	if k == 0 || k >= kindEnd {
		return "unknown"
	}
	return kindNames[k]
}

// Error makes a Kind usable as a sentinel with errors.Is.
func (k Kind) Error() string { return "xmlscan: " + k.String() }

// IsLimit reports whether k is one of the KindLimit* kinds.
func (k Kind) IsLimit() bool { return k >= KindLimitBytes && k < kindEnd }

// Error is the only error type Scan returns.
type Error struct {
	Kind Kind
	// Offset is the byte offset in the scanned input where the problem was
	// detected (for limits, where the limit was crossed).
	Offset int
	// Detail is a short human-readable explanation for logs. It may contain
	// element or attribute names from the input but never attribute values
	// or text content.
	Detail string
}

func (e *Error) Error() string {
	s := "xmlscan: " + e.Kind.String()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s + " at offset " + strconv.Itoa(e.Offset)
}

// Is reports whether target is e's Kind, so errors.Is(err, KindDoctype) works.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

func newError(k Kind, off int, detail string) *Error {
	return &Error{Kind: k, Offset: off, Detail: detail}
}

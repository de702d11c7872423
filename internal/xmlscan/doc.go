// Package xmlscan is wssgw's strict byte-level XML gate. Every SOAP message,
// and every plaintext that decryption produces, passes Scan before any XML
// engine (the DOM engine, the template automaton) sees it (DESIGN.md §5.1);
// both read the message through the Document it builds.
//
// # Threat model
//
// encoding/xml, and beevik/etree on top of it, accept ill-formed XML that
// Java, libxml2 and .NET reject: duplicate attributes (also a:Id/b:Id bound
// to one URI), undeclared prefixes, rebinding of xml and xmlns, DOCTYPEs
// (kept and re-serialized), several roots, trailing content, missing
// whitespace between attributes, UTF-16 declarations over UTF-8 bytes, and
// no attribute-value normalization (security.md §0.3, §2.1, §2.2; Go's
// own position, golang/go#43168, is that encoding/xml is not a security
// boundary). Each of those is a parser differential between wssgw and the
// backend or between the two engines, which is what signature wrapping
// needs. This package is the only XML parser on the request path: the DOM
// engine walks its Document (it no longer builds an etree tree,
// docs/decisions.md), so there is no second parser to disagree with it.
//
// # Contract
//
// Scan accepts a document only if it is
//
//   - UTF-8 (an optional UTF-8 BOM; an XML declaration, if any, at the start,
//     version 1.0, encoding UTF-8), made only of XML 1.0 Chars, including
//     characters denoted by character references;
//   - well-formed XML 1.0 with no DOCTYPE or other markup declaration, no
//     processing instruction, exactly one root element and only white
//     space outside it;
//   - namespace-well-formed per Namespaces in XML 1.0: QNames with at most
//     one colon, every prefix declared, no xmlns:p="", xml and xmlns
//     never rebound, no two attributes with the same expanded name;
//   - within Limits, and free of comments and CDATA inside the elements
//     named in Config.NoCommentsIn (by default the wsse:Security header);
//   - free of character data other than white space (S, literally: no
//     reference, even to a white-space character), CDATA sections and
//     comments directly inside the elements named in Config.ElementOnly
//     (by default the SOAP 1.1 and 1.2 Envelope and Header, whose content
//     SOAP defines as elements only: nothing a signature could cover may
//     sit between the header blocks, the Header and the Body).
//
// Comments, like text, CDATA and processing instructions, are never
// accepted before or after the root element, whatever the Config.
//
// The gate is stricter than encoding/xml, never looser: every document it
// accepts is accepted by an encoding/xml Decoder in Strict mode, with the
// same elements, namespaces, attributes and text (tested differentially and
// by FuzzScan).
//
// On success the Document records, without copying the input, each element's
// byte offsets (start tag, content, end tag), parent, depth, resolved names,
// attributes with their raw value spans, the namespace declarations it adds,
// and flags telling engines whether its subtree holds comments, CDATA or
// references, so that an engine can reject those inside signed parts and
// take the fast path when a value needs no normalization. The normalization
// helpers (NormalizeAttrValue, NormalizeText, NormalizeLineEnds,
// Document.AttrValue, Document.Text) give the values an XML processor must
// report; etree's attribute values are not normalized and must not be
// digested.
//
// A Document can be reused (or pooled) across scans; in steady state a scan
// allocates nothing.
package xmlscan

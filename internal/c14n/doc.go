// Package c14n canonicalizes an element subtree of a document that passed
// the xmlscan gate, working directly on the gate's byte spans
// (*xmlscan.Document): no DOM, no re-serialization of a parsed tree
// (DESIGN.md §3: the engines must never trust a re-serialization of an
// etree tree as "the verified bytes").
//
// Supported algorithms (DESIGN.md §5.8: XPath, XSLT and every other
// transform are never supported):
//
//   - Exclusive XML Canonicalization 1.0
//     (https://www.w3.org/TR/xml-exc-c14n/, AlgExcC14N and
//     AlgExcC14NWithComments) with an InclusiveNamespaces PrefixList;
//   - Canonical XML 1.0 (https://www.w3.org/TR/2001/REC-xml-c14n-20010315,
//     AlgC14N10 and AlgC14N10WithComments);
//   - Canonical XML 1.1 (https://www.w3.org/TR/xml-c14n11/, AlgC14N11 and
//     AlgC14N11WithComments), except the xml:base fix-up: a subtree whose
//     ancestors carry xml:base gives ErrUnsupported.
//
// The input node-set is always "the element at index elem and all its
// descendants, with their attributes and namespace nodes" — what a
// same-document reference (URI="#id") selects. Comments are dropped by
// the variants without comments; note that XML Signature §4.4.3.3 says a
// bare "#id" reference removes comments even under a #WithComments
// transform, which the caller must honour by passing the plain algorithm.
// The gate rejects processing instructions, so none can occur.
//
// The values canonicalized are those an XML processor reports: attribute
// values normalized per XML 1.0 §3.3.3, line ends per §2.11, character and
// entity references resolved (C14N 1.0 §1.1, §2.1), using xmlscan's
// normalization helpers. Output is appended to a caller buffer
// (Exclusive, Inclusive, Canonicalize) or streamed through an internal
// buffer into an io.Writer such as a hash.Hash (ExclusiveTo,
// CanonicalizeTo), so a digest never needs the whole canonical form in
// memory. In steady state neither allocates.
package c14n

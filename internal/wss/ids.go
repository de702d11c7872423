package wss

import "github.com/wssgw/wssgw/internal/xmlscan"

// IsIDAttr reports whether an attribute is an id for both engines: Id or
// ID in any namespace (wsu:Id, ds:Id, xenc:Id, unqualified) and xml:id, so
// that an id names one element whatever attribute a resolver looks at
// (security.md A2, A3).
func IsIDAttr(a *xmlscan.Attr) bool {
	return a.Local == "Id" || a.Local == "ID" || (a.Local == "id" && a.Space == xmlscan.NamespaceXML)
}

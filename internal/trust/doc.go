// Package trust decides whether a certificate is trusted: wssgw's trust
// stores, CRLs, OCSP, the lookup index for token references, the lookup
// values one certificate answers to (CertKeys, computed once per
// certificate) and the distinguished names they compare.
//
// Contract (DESIGN §5.5, "keys come from the trust store"):
//
//   - A key that verifies a message or receives encrypted data comes only
//     from a Store: a certificate chained to a configured CA (never the
//     system roots) or a pinned certificate, checked at the message time for
//     validity, KeyUsage, optional ExtKeyUsage, subject/SAN patterns, CRLs
//     and, when configured, OCSP responses fetched in the background.
//   - Certificates carried in messages (BinarySecurityToken, KeyInfo, chain
//     intermediates) and found through the Index (IssuerSerial, SKI,
//     ThumbprintSHA1) are lookup hints. Nothing is trusted because it was
//     presented: every candidate goes through Store.Verify.
//   - A Store is immutable but for its bounded verification cache; a reload
//     (internal/reload) builds a new one, and with it a new, empty cache.
//   - Every error wraps one sentinel (ErrUntrusted, ErrExpired, ...) or one
//     of internal/crypto's for the key material itself; Reason maps it to
//     a label from a closed set for the uniform fault's metric.
//
// It is separate from internal/crypto, which holds the algorithms and the
// key material (what a key can do, and loading it from files): this package
// holds the policy of which keys to believe. It imports crypto for loading
// certificates and checking key strength; crypto knows nothing of it. Error
// messages keep the "crypto: " prefix they had before the split, so logs
// and the operator documentation read as before.
package trust

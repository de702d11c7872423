package dom

import (
	"crypto/x509"
	"encoding/asn1"
	"math/big"
	"slices"
	"strings"

	"github.com/wssgw/wssgw/internal/trust"
	"github.com/wssgw/wssgw/internal/wss"
)

// tokenRef is what a KeyInfo or SecurityTokenReference says about a key
// (WSS X.509 Token Profile 1.1 §3.2): certificates carried in the message
// (hints only, DESIGN.md §5.5), or a lookup key, or a message key.
type tokenRef struct {
	kind   string              // wss.KeyRef*
	certs  []*x509.Certificate // leaf first
	token  int                 // start offset of the BST, -1
	issuer string              // X509IssuerSerial
	serial *big.Int
	ski    []byte
	thumb  []byte
	key    []byte // a symmetric key from an EncryptedKey

	// name is issuer parsed (parsedIssuer), once per message however
	// many certificates it is compared with, and for a name seen before
	// not at all (tokenCache.issuer); named: 0 not yet, 1 parsed, -1
	// does not parse (it then names no certificate).
	name  trust.IssuerName
	named int8
	// carried is the lookup values of the carried certificate the
	// lookup keys name (matchCarried), once found.
	carried *trust.CertKeys
}

// maxCarried bounds the certificates one token reference carries (the
// X509Certificates of an X509Data, the certificates of an X509PKIPathv1):
// each is parsed, and offered to chain building, before any signature is
// verified or key unwrapped, so their number is the attacker's to choose
// otherwise. A leaf and its intermediates up to a root are a handful.
const maxCarried = 8

// keyInfo reads a ds:KeyInfo holding one SecurityTokenReference or
// X509Data. KeyValue, KeyName, RetrievalMethod and the rest are refused:
// keys come from the trust store, and nothing is fetched (security.md A7,
// xml-crypto CVE-2024-32962).
func (m *message) keyInfo(ki int) (*tokenRef, error) {
	c, err := m.only(ki, "KeyInfo")
	if err != nil {
		return nil, err
	}
	switch {
	case m.is(c, nsWSSE, "SecurityTokenReference"):
		return m.str(c)
	case m.is(c, nsDS, "X509Data") && m.plain:
		// Plain XML Signature documents (VerifyDocument) carry X509Data
		// directly; WS-Security requires a SecurityTokenReference (BSP R5417).
		return m.x509Data(c)
	}
	return nil, wss.Failf(wss.ReasonToken, "unsupported %s in KeyInfo", m.name(c))
}

func (m *message) str(s int) (*tokenRef, error) {
	c, err := m.only(s, "SecurityTokenReference")
	if err != nil {
		return nil, err
	}
	switch {
	case m.is(c, nsWSSE, "Reference"):
		return m.directRef(c)
	case m.is(c, nsWSSE, "KeyIdentifier"):
		return m.keyIdentifier(c)
	case m.is(c, nsDS, "X509Data"):
		return m.x509Data(c)
	}
	return nil, wss.Failf(wss.ReasonToken, "unsupported %s in SecurityTokenReference", m.name(c))
}

// directRef resolves a wsse:Reference to a BinarySecurityToken or an
// EncryptedKey of our Security header.
func (m *message) directRef(r int) (*tokenRef, error) {
	uri, _ := m.attr(r, "", "URI")
	t, err := m.resolve(uri)
	if err != nil {
		return nil, err
	}
	if !m.inSecurity(t) {
		return nil, wss.Failf(wss.ReasonToken, "referenced token is not in the Security header")
	}
	vt, _ := m.attr(r, "", "ValueType")
	switch {
	case m.is(t, nsWSSE, "BinarySecurityToken"):
		certs, err := m.bst(t)
		if err != nil {
			return nil, err
		}
		if tvt, _ := m.attr(t, "", "ValueType"); vt != "" && vt != tvt {
			return nil, wss.Failf(wss.ReasonToken, "Reference ValueType does not match the token")
		}
		return &tokenRef{kind: wss.KeyRefBST, certs: certs, token: m.start(t)}, nil
	case m.is(t, nsXEnc, "EncryptedKey"):
		key, ok := m.keys[uri]
		if !ok || (vt != "" && vt != vtEncryptedKey) {
			return nil, wss.Failf(wss.ReasonToken, "reference to an EncryptedKey not processed before")
		}
		return &tokenRef{kind: wss.KeyRefEncryptedKey, key: key, token: -1}, nil
	}
	return nil, wss.Failf(wss.ReasonToken, "reference to unsupported token %s", m.name(t))
}

func (m *message) keyIdentifier(k int) (*tokenRef, error) {
	vt, _ := m.attr(k, "", "ValueType")
	if enc, ok := m.attr(k, "", "EncodingType"); ok && enc != encBase64 {
		return nil, wss.Failf(wss.ReasonToken, "KeyIdentifier EncodingType is not Base64Binary")
	}
	if vt == vtX509v3 {
		// X.509 Token Profile 1.1 §3.2.2 (WSS4J X509_KEY_IDENTIFIER): the
		// certificate itself. Like a BinarySecurityToken's, it is untrusted
		// input: trusted checks it against the trust store (a chain to
		// caFiles, or a pin), recipient against our own certificates.
		c, err := m.certificate(k, "X509v3 KeyIdentifier")
		if err != nil {
			return nil, err
		}
		return &tokenRef{kind: wss.KeyRefX509KeyIdentifier, certs: []*x509.Certificate{c}, token: -1}, nil
	}
	v, err := b64(m.text(k))
	if err != nil {
		return nil, err
	}
	switch vt {
	case vtSKI:
		return &tokenRef{kind: wss.KeyRefSKI, ski: v, token: -1}, nil
	case vtThumbprint:
		return &tokenRef{kind: wss.KeyRefThumbprint, thumb: v, token: -1}, nil
	case vtEncKeySHA1:
		key, ok := m.keys["sha1:"+string(v)]
		if !ok {
			return nil, wss.Failf(wss.ReasonToken, "EncryptedKeySHA1 names no processed EncryptedKey")
		}
		return &tokenRef{kind: wss.KeyRefEncryptedKey, key: key, token: -1}, nil
	}
	return nil, wss.Failf(wss.ReasonToken, "unsupported KeyIdentifier ValueType %q", vt)
}

// x509Data reads X509IssuerSerial, X509SKI and X509Certificate. A
// certificate is only a candidate; the lookup keys decide. XMLDSig 1.1
// §4.5.4: the X509IssuerSerial and X509SKI of one X509Data "MUST refer to
// the certificate or certificates containing the validation key", and every
// X509Certificate relates to it (it or its chain). So the X509Data names
// one certificate, unambiguously: each lookup key at most once, all of them
// matched by the certificate used (refMatches checks every key present),
// and when certificates are carried too (zeep sends X509IssuerSerial with
// X509Certificate) the leaf is the carried one the keys name, or the
// X509Data is refused. Before, the last lookup key silently won.
func (m *message) x509Data(x int) (*tokenRef, error) {
	ref := &tokenRef{token: -1}
	for _, c := range m.children(x) {
		switch {
		case (m.is(c, nsDS, "X509IssuerSerial") && ref.serial != nil) || (m.is(c, nsDS, "X509SKI") && ref.ski != nil):
			return nil, wss.Failf(wss.ReasonToken, "X509Data with two %s", m.name(c))
		case m.is(c, nsDS, "X509IssuerSerial"):
			name, serial := m.child(c, nsDS, "X509IssuerName"), m.child(c, nsDS, "X509SerialNumber")
			if name < 0 || serial < 0 {
				return nil, wss.Failf(wss.ReasonToken, "incomplete X509IssuerSerial")
			}
			n, ok := new(big.Int).SetString(strings.TrimSpace(m.text(serial)), 10)
			if !ok {
				return nil, wss.Failf(wss.ReasonToken, "bad X509SerialNumber")
			}
			ref.kind, ref.issuer, ref.serial = wss.KeyRefIssuerSerial, m.text(name), n
			ref.setIssuerName(m.engine.tokens.issuer(ref.issuer))
		case m.is(c, nsDS, "X509SKI"):
			v, err := b64(m.text(c))
			if err != nil {
				return nil, err
			}
			if ref.kind == "" {
				ref.kind = wss.KeyRefSKI
			}
			ref.ski = v
		case m.is(c, nsDS, "X509Certificate"):
			if len(ref.certs) == maxCarried {
				return nil, wss.Failf(wss.ReasonToken, "X509Data with more than %d certificates", maxCarried)
			}
			cert, err := m.certificate(c, "X509Certificate")
			if err != nil {
				return nil, err
			}
			ref.certs = append(ref.certs, cert)
		default:
			return nil, wss.Failf(wss.ReasonToken, "unsupported %s in X509Data", m.name(c))
		}
	}
	switch {
	case ref.kind == "" && len(ref.certs) == 0:
		return nil, wss.Failf(wss.ReasonToken, "empty X509Data")
	case ref.kind == "":
		ref.kind = wss.KeyRefX509Data
	case len(ref.certs) > 0:
		k := m.matchCarried(ref)
		if k == nil {
			return nil, wss.Failf(wss.ReasonToken, "X509Data lookup keys name none of its certificates")
		}
		leaf := k.Certificate()
		// The named certificate first (the leaf), the others are chain
		// hints.
		certs := []*x509.Certificate{leaf}
		for _, c := range ref.certs {
			if c != leaf {
				certs = append(certs, c)
			}
		}
		ref.certs = certs
	}
	return ref, nil
}

// certificate parses the base64 DER certificate that is the text of
// element i (an X509v3 KeyIdentifier, an X509Data's X509Certificate),
// once per text: tokenCache keeps it as it keeps an X509v3
// BinarySecurityToken's, the same function of the same text. A sender
// names its certificate, or ours, with the same text in every message,
// and parsing it was most of resolving the reference
// (BenchmarkRecipient: an X509v3 KeyIdentifier about 20 µs, 2.5 µs
// kept; issue 14). The certificate is shared read-only.
func (m *message) certificate(i int, what string) (*x509.Certificate, error) {
	text := m.doc.Text(i, nil)
	if certs, ok := m.engine.tokens.token(vtX509v3, text); ok {
		return certs[0], nil
	}
	der, err := b64(string(text))
	if err != nil {
		return nil, err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, wss.Wrap(wss.ReasonToken, err, "%s", what)
	}
	m.engine.tokens.putToken(vtX509v3, text, []*x509.Certificate{c})
	return c, nil
}

// bst decodes a BinarySecurityToken: one X509v3 certificate or an
// X509PKIPathv1 (a DER SEQUENCE of certificates, trust anchor first, X.509
// Token Profile 1.1 §3.1), returned leaf first.
func (m *message) bst(t int) ([]*x509.Certificate, error) {
	vt, _ := m.attr(t, "", "ValueType")
	if enc, _ := m.attr(t, "", "EncodingType"); enc != encBase64 {
		// BSP R3029: EncodingType is required and Base64Binary.
		return nil, wss.Failf(wss.ReasonToken, "BinarySecurityToken EncodingType is not Base64Binary")
	}
	var text []byte
	if !m.xopValue(t) {
		text = m.doc.Text(t, nil)
		if certs, ok := m.engine.tokens.token(vt, text); ok {
			return slices.Clone(certs), nil
		}
	}
	certs, err := m.parseBST(t, vt)
	if err == nil && text != nil {
		m.engine.tokens.putToken(vt, text, certs)
		certs = slices.Clone(certs)
	}
	return certs, err
}

// parseBST decodes and parses the certificates of BinarySecurityToken t of
// value type vt.
func (m *message) parseBST(t int, vt string) ([]*x509.Certificate, error) {
	der, err := m.bstOctets(t)
	if err != nil {
		return nil, err
	}
	switch vt {
	case vtX509v3:
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, wss.Wrap(wss.ReasonToken, err, "BinarySecurityToken")
		}
		return []*x509.Certificate{c}, nil
	case vtPKIPath:
		var raws []asn1.RawValue
		rest, err := asn1.Unmarshal(der, &raws)
		if err != nil || len(rest) > 0 || len(raws) == 0 {
			return nil, wss.Failf(wss.ReasonToken, "bad X509PKIPathv1")
		}
		if len(raws) > maxCarried {
			return nil, wss.Failf(wss.ReasonToken, "X509PKIPathv1 of more than %d certificates", maxCarried)
		}
		certs := make([]*x509.Certificate, len(raws))
		for k, r := range raws {
			c, err := x509.ParseCertificate(r.FullBytes)
			if err != nil {
				return nil, wss.Wrap(wss.ReasonToken, err, "X509PKIPathv1")
			}
			certs[len(raws)-1-k] = c
		}
		return certs, nil
	}
	return nil, wss.Failf(wss.ReasonToken, "unsupported BinarySecurityToken ValueType %q", vt)
}

// trusted turns a token reference into a verified signer: the leaf is found
// (carried or looked up) and then validated by the trust store.
func (m *message) trusted(ref *tokenRef) (*trust.Identity, error) {
	ts := m.p.Trust()
	if ts == nil {
		return nil, wss.Failf(wss.ReasonUntrusted, "policy trusts no signer")
	}
	leaf, err := m.leaf(ref, ts.Index())
	if err != nil {
		return nil, err
	}
	var inter []*x509.Certificate
	if len(ref.certs) > 1 {
		inter = ref.certs[1:]
	}
	id, err := ts.Verify(leaf, inter, m.now, trust.PurposeSigning)
	if err != nil {
		return nil, wss.Wrap(wss.ReasonUntrusted, err, "signer %s", trust.Reason(err))
	}
	return id, nil
}

// leaf finds the certificate a reference names. The certificates of the
// trust index are the configuration's: their lookup values are the
// engine's (certKeys), computed once, not per message.
func (m *message) leaf(ref *tokenRef, ix *trust.Index) (*x509.Certificate, error) {
	var (
		c   *x509.Certificate
		err error
	)
	switch ref.kind {
	case wss.KeyRefBST, wss.KeyRefX509Data, wss.KeyRefX509KeyIdentifier:
		return ref.certs[0], nil
	case wss.KeyRefIssuerSerial:
		if len(ref.certs) == 0 && ref.ski == nil {
			return m.issuerSerialLeaf(ref, ix)
		}
		if k := m.matchCarried(ref); k != nil {
			// matchCarried checked every lookup key.
			return k.Certificate(), nil
		}
		c, err = ix.ByIssuerSerial(ref.issuer, ref.serial)
	case wss.KeyRefSKI:
		if k := m.matchCarried(ref); k != nil {
			return k.Certificate(), nil
		}
		c, err = ix.BySKI(ref.ski)
	case wss.KeyRefThumbprint:
		c, err = ix.ByThumbprintSHA1(ref.thumb)
	default:
		return nil, wss.Failf(wss.ReasonToken, "no certificate for a %s reference", ref.kind)
	}
	if err != nil || c == nil {
		return nil, wss.Wrap(wss.ReasonToken, err, "certificate not found")
	}
	if !refMatches(ref, m.engine.certKeys(c)) {
		// Found by one lookup key, not named by another of the same
		// X509Data.
		return nil, wss.Failf(wss.ReasonToken, "X509Data lookup keys name different certificates")
	}
	return c, nil
}

// issuerSerialLeaf is leaf for an X509IssuerSerial alone (no certificate
// carried, no X509SKI): the trust index's certificate for it, found once
// per index and reference (tokenCache), since parsing and comparing the
// issuer's DN costs as much as the lookup saves.
func (m *message) issuerSerialLeaf(ref *tokenRef, ix *trust.Index) (*x509.Certificate, error) {
	k := leafKey{ix: ix, issuer: ref.issuer, serial: ref.serial.String()}
	if c, ok := m.engine.tokens.leaf(k); ok {
		return c, nil
	}
	c, err := ix.ByIssuerSerial(ref.issuer, ref.serial)
	if err != nil || c == nil {
		return nil, wss.Wrap(wss.ReasonToken, err, "certificate not found")
	}
	if !refMatches(ref, m.engine.certKeys(c)) {
		return nil, wss.Failf(wss.ReasonToken, "X509Data lookup keys name different certificates")
	}
	m.engine.tokens.putLeaf(k, c)
	return c, nil
}

// matchCarried returns the lookup values of the carried certificate that
// matches every lookup key of the reference (zeep sends X509IssuerSerial
// and X509Certificate), or nil. The certificates are the message's, parsed
// once per text (message.certificate), so their values are kept too, in
// the engine's cache for message certificates (carried), apart from the
// configuration's so that senders cannot evict those.
func (m *message) matchCarried(ref *tokenRef) *trust.CertKeys {
	if ref.carried != nil {
		return ref.carried
	}
	for _, c := range ref.certs {
		var k *trust.CertKeys
		if len(c.Raw) <= tokenCacheMaxText {
			k = m.engine.carried.get(c)
		} else {
			k = trust.NewCertKeys(c) // not kept, as its text is not (tokenCache)
		}
		if refMatches(ref, k) {
			ref.carried = k
			return k
		}
	}
	return nil
}

// refMatches reports whether the certificate of k is the one ref names:
// every lookup key ref holds names it. k's values are kept with the
// certificate (trust.CertKeys) and ref's issuer is parsed once
// (parsedIssuer), so comparing one reference with several certificates,
// or with the same configured certificate message after message, parses
// no DN twice; the rule is DN.Equal's, ComputeSKI's and the SKI
// extension's, as before.
func refMatches(ref *tokenRef, k *trust.CertKeys) bool {
	switch ref.kind {
	case wss.KeyRefBST, wss.KeyRefX509Data, wss.KeyRefX509KeyIdentifier:
		return len(ref.certs) > 0 && ref.certs[0].Equal(k.Certificate())
	case wss.KeyRefIssuerSerial, wss.KeyRefSKI:
		// Every lookup key present must name the certificate (an
		// X509Data may hold both an X509IssuerSerial and an X509SKI).
		if ref.serial != nil {
			name, ok := ref.parsedIssuer()
			if !ok || !k.HasIssuerSerial(name, ref.serial) {
				return false
			}
		}
		if ref.ski != nil && !k.HasSKI(ref.ski) {
			return false
		}
		return ref.serial != nil || ref.ski != nil
	case wss.KeyRefThumbprint:
		return k.HasThumbprintSHA1(ref.thumb)
	}
	return false
}

// parsedIssuer is ref's X509IssuerName parsed, and whether it parses:
// as x509Data found it (tokenCache.issuer), or parsed here once.
func (ref *tokenRef) parsedIssuer() (trust.IssuerName, bool) {
	if ref.named == 0 {
		n, err := trust.ParseIssuerName(ref.issuer)
		ref.setIssuerName(n, err == nil)
	}
	return ref.name, ref.named > 0
}

// setIssuerName records ref's X509IssuerName parsed (ok) or not parsing.
func (ref *tokenRef) setIssuerName(n trust.IssuerName, ok bool) {
	ref.name, ref.named = n, -1
	if ok {
		ref.named = 1
	}
}

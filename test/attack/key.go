package attack

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"math/big"
	"sync"
	"time"
)

var (
	selfSignedOnce sync.Once
	selfSignedKey  *rsa.PrivateKey
	selfSignedDER  []byte
	selfSignedErr  error
)

// selfSigned returns a process-wide RSA-2048 key and a self-signed
// certificate whose subject imitates a typical client ("O=Peer,CN=client").
func selfSigned() (*rsa.PrivateKey, []byte, error) {
	selfSignedOnce.Do(func() {
		selfSignedKey, selfSignedErr = rsa.GenerateKey(rand.Reader, 2048)
		if selfSignedErr != nil {
			return
		}
		name := pkix.Name{CommonName: "client", Organization: []string{"Peer"}}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(4242),
			Subject:      name,
			Issuer:       name,
			NotBefore:    time.Now().Add(-24 * time.Hour),
			NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
		}
		selfSignedDER, selfSignedErr = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &selfSignedKey.PublicKey, selfSignedKey)
	})
	return selfSignedKey, selfSignedDER, selfSignedErr
}

func (g *gen) key() {
	m := g.m
	const F = FamilyKey
	_, der, err := selfSigned()
	if err != nil {
		g.err = err
		return
	}
	atkB64 := base64.StdEncoding.EncodeToString(der)
	if m.bst >= 0 {
		// The BST swapped for a self-issued certificate, no re-signing.
		g.add(F, "key/bst-replaced-self-signed", m.apply(m.setContent(m.bst, atkB64)))
		// An X509PKIPath / unknown ValueType for the same bytes.
		if e, ok := m.setAttr(m.bst, "", "ValueType", "urn:wssgw:attack:token"); ok {
			g.add(F, "key/bst-unknown-valuetype", m.apply(e))
		}
	}
	if m.keyInfo >= 0 {
		kp := prefixOf(m.qname(m.keyInfo))
		x509d := "<" + kp + "X509Data><" + kp + "X509Certificate>" + atkB64 + "</" + kp + "X509Certificate></" + kp + "X509Data>"
		g.add(F, "key/keyinfo-x509data-self-signed", m.apply(m.setContent(m.keyInfo, x509d)))
		if cert := m.cert(); cert != nil {
			// The signer's own certificate embedded directly (no STR):
			// BSP R5417, and KeyInfo content is not a trust decision.
			x509s := "<" + kp + "X509Data><" + kp + "X509Certificate>" + base64.StdEncoding.EncodeToString(cert.Raw) +
				"</" + kp + "X509Certificate></" + kp + "X509Data>"
			g.add(F, "key/keyinfo-x509data-signer-cert", m.apply(m.setContent(m.keyInfo, x509s)))
		}
		g.add(F, "key/keyinfo-empty", m.apply(m.setContent(m.keyInfo, "")))
		g.add(F, "key/keyinfo-keyname", m.apply(m.setContent(m.keyInfo, "<"+kp+"KeyName>CN=client,O=Peer</"+kp+"KeyName>")))
	}
	// IssuerSerial pointing at another certificate.
	for i := range m.doc.Elements {
		if e := m.el(i); e.Space == NSDS && e.Local == "X509SerialNumber" && inside(m.doc, i, m.keyInfo) {
			g.add(F, "key/issuerserial-other-serial", m.apply(m.setContent(i, "4242")))
		}
		if e := m.el(i); e.Space == NSDS && e.Local == "X509IssuerName" && inside(m.doc, i, m.keyInfo) {
			g.add(F, "key/issuerserial-other-issuer", m.apply(m.setContent(i, "O=Peer,CN=client")))
		}
	}
}

// stripped returns the message without its Security header; edits are
// applied as well.
func (m *msg) stripped(edits ...edit) []byte {
	return m.apply(append(edits, m.remove(m.security))...)
}

func (g *gen) resigned(attacker Resigner) error {
	m := g.m
	const F = FamilyKey
	sign := func(name string, env []byte, post func(*msg) []byte) error {
		out, err := attacker(env)
		if err != nil {
			return fmt.Errorf("attack: resigner (%s): %w", name, err)
		}
		if post != nil {
			r, err := parse(out)
			if err != nil {
				return fmt.Errorf("attack: resigned message (%s): %w", name, err)
			}
			out = post(r)
			if out == nil {
				return nil
			}
		}
		g.add(F, name, out)
		return nil
	}
	if err := sign("key/resigned-self-issued", m.stripped(), nil); err != nil {
		return err
	}
	if err := sign("key/resigned-altered-body", m.stripped(m.setContent(m.body, attackerPayload)), nil); err != nil {
		return err
	}
	// A valid attacker signature, then the KeyInfo token swapped for the
	// trusted signer's certificate ("valid signature, wrong key").
	if cert := m.cert(); cert != nil {
		trusted := base64.StdEncoding.EncodeToString(cert.Raw)
		if err := sign("key/resigned-trusted-bst-swapped-in", m.stripped(), func(r *msg) []byte {
			if r.bst < 0 {
				return nil
			}
			return r.apply(r.setContent(r.bst, trusted))
		}); err != nil {
			return err
		}
	}
	// The attacker's Security header next to the original one.
	return sign("key/resigned-plus-original-security", m.stripped(), func(r *msg) []byte {
		return r.apply(r.after(r.security, m.detached(m.security)))
	})
}

// Package fit fits signer options to a gateway policy, for a requester
// making messages a wssgw route accepts: `wssgw sign` today, an egress side
// later. It reads the policy as the gateway compiles it (wss.Compile), so
// the algorithm allow-list is the gateway's own. Its messages name the
// `wssgw sign` flags that change each choice (--ttl, --encrypt-for,
// --key-reference).
package fit

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/xml"
	"fmt"
	"strings"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/trust"
	"github.com/wssgw/wssgw/internal/wss"
)

// Policy checks the signing choices in o against policy p, named name, and
// picks the first algorithms of each kind that the policy allows (the
// signature method for o's key, the digest and, when o encrypts, the data
// encryption and key transport). What would make the gateway reject the
// message for certain is an error; what depends on the gateway's key
// material (trust, certificate indexes) goes to note, so that a
// deliberately unacceptable message can still be made.
func Policy(name string, p config.Policy, o *signer.Options, note func(format string, args ...any)) error {
	var ps []string
	bad := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }

	if p.Role != "" {
		bad("the policy expects the Security header for role %q; sign writes one without role", p.Role)
	}
	if p.Has(config.RequireUsernameToken) {
		bad("the policy requires a UsernameToken, which sign does not write")
	}
	if o.TTL < 0 && p.Has(config.RequireTimestamp) {
		bad("the policy requires a Timestamp: --ttl must not be 0")
	}
	for _, part := range p.RequiredSignedParts() {
		switch part {
		case config.PartBody:
		case config.PartTimestamp:
			if o.TTL < 0 {
				bad("the policy wants the Timestamp signed: --ttl must not be 0")
			}
		case config.PartUsernameToken, config.PartToken:
			bad("the policy wants %s signed, which sign does not do", part)
		default:
			if space, local, ok := config.ParseQName(part); ok {
				o.SignHeaders = append(o.SignHeaders, xml.Name{Space: space, Local: local})
			}
		}
	}
	for _, part := range p.EncryptedParts {
		if part != config.PartBody {
			bad("the policy wants header %s encrypted; sign encrypts the Body only", part)
		}
	}

	// The algorithm allow-list, from the policy without its key material.
	shell := p
	shell.Trust, shell.DecryptionKeys, shell.UsernameToken.CredentialsFile = config.Trust{}, nil, ""
	cp, err := wss.Compile(name, shell, nil, reload.Options{})
	if err != nil {
		return err
	}
	o.SignatureAlgorithm = firstAllowed(cp, wss.UseSignature, signatureAlgorithms(o.Signer.Public())...)
	if o.SignatureAlgorithm == "" {
		bad("the policy allows no signature algorithm for a %s key", keyKind(o.Signer.Public()))
	}
	o.DigestAlgorithm = firstAllowed(cp, wss.UseDigest, crypto.AlgDigestSHA256, crypto.AlgDigestSHA384, crypto.AlgDigestSHA512)
	if o.DigestAlgorithm == "" {
		bad("the policy allows none of the digests sign offers (SHA-256/384/512)")
	}
	if o.EncryptFor != nil {
		if _, ok := o.EncryptFor.PublicKey.(*rsa.PublicKey); !ok {
			bad("--encrypt-for needs an RSA certificate, got a %s key", keyKind(o.EncryptFor.PublicKey))
		}
		o.DataAlgorithm = firstAllowed(cp, wss.UseData, crypto.AlgAES256GCM, crypto.AlgAES128GCM, crypto.AlgAES192GCM)
		if o.DataAlgorithm == "" {
			bad("the policy allows none of the data encryption algorithms sign offers (AES-GCM)")
		}
		o.KeyTransport = crypto.AlgRSAOAEPMGF1P
		if !cp.Allows(wss.UseKeyTransport, o.KeyTransport) {
			bad("the policy does not allow key transport %s, the only one sign offers", o.KeyTransport)
		}
		checkRecipient(p, o.EncryptFor, note)
	}
	if len(ps) > 0 {
		return fmt.Errorf("the message would not fit policy %s:\n  %s", name, strings.Join(ps, "\n  "))
	}
	checkSignerTrust(p, o, note)
	return nil
}

// checkRecipient notes when no decryption key of the policy belongs to the
// certificate the Body is encrypted for.
func checkRecipient(p config.Policy, c *x509.Certificate, note func(string, ...any)) {
	for _, k := range p.DecryptionKeys {
		if k.CertFile == "" {
			return // PKCS#12: not read without need
		}
		certs, err := crypto.LoadCertificates(k.CertFile)
		if err == nil && len(certs) > 0 && certs[0].Equal(c) {
			return
		}
	}
	note("no decryptionKeys entry of the policy is for %s: the gateway will not decrypt", c.Subject)
}

// checkSignerTrust notes when the policy's trust settings would not accept
// the signing certificate or resolve its reference.
func checkSignerTrust(p config.Policy, o *signer.Options, note func(string, ...any)) {
	t := p.Trust
	if len(t.CAFiles)+len(t.PinnedCertFiles)+len(t.PinnedSHA256)+len(t.KnownCertFiles) == 0 {
		if p.Has(config.RequireSignature) {
			note("the policy trusts no certificate: the signature will not be accepted")
		}
		return
	}
	ts, err := trust.NewStore(t.TrustOptions())
	if err != nil {
		note("cannot load the policy's trust settings: %v", err)
		return
	}
	var inter []*x509.Certificate
	if len(o.Chain) > 1 {
		inter = o.Chain[1:]
	}
	if _, err := ts.Verify(o.Certificate, inter, time.Now(), trust.PurposeSigning); err != nil {
		note("the policy does not trust the signing certificate %s: %v", o.Certificate.Subject, err)
	}
	if o.KeyReference != signer.RefBST {
		tp := sha1.Sum(o.Certificate.Raw)
		if _, err := ts.Index().ByThumbprintSHA1(tp[:]); err != nil {
			note("--key-reference %s: the signing certificate is not in the policy's knownCertFiles or pinnedCertFiles, so the gateway cannot resolve the reference", o.KeyReference)
		}
	}
}

// signatureAlgorithms lists the methods sign can use with a key, preferred
// first.
func signatureAlgorithms(pub any) []string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return []string{crypto.AlgRSASHA256, crypto.AlgRSASHA384, crypto.AlgRSASHA512}
	case *ecdsa.PublicKey:
		// The hash matching the curve strength first (FIPS 186-5 §6.4).
		if k.Curve.Params().BitSize == 384 {
			return []string{crypto.AlgECDSASHA384, crypto.AlgECDSASHA512, crypto.AlgECDSASHA256}
		}
		return []string{crypto.AlgECDSASHA256, crypto.AlgECDSASHA384, crypto.AlgECDSASHA512}
	case ed25519.PublicKey:
		return []string{crypto.AlgEd25519}
	}
	return nil
}

func keyKind(pub any) string {
	switch pub.(type) {
	case *rsa.PublicKey:
		return "RSA"
	case *ecdsa.PublicKey:
		return "ECDSA"
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", pub)
}

func firstAllowed(p *wss.Policy, kind string, uris ...string) string {
	for _, u := range uris {
		if p.Allows(kind, u) {
			return u
		}
	}
	return ""
}

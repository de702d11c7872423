package config

import (
	"crypto/x509"
	"fmt"
	"time"

	"github.com/wssgw/wssgw/internal/crypto"
)

// Route kinds.
const (
	// KindIngress: partners call the backend through wssgw, which verifies
	// their requests and signs the backend's responses (the default).
	KindIngress = "ingress"
	// KindEgress: a legacy service calls a partner through wssgw, which
	// secures the outbound request and verifies the partner's response
	// (issue 15). The route's backend is the partner's endpoint.
	KindEgress = "egress"
)

// Key reference kind of an egress signature besides the KeyRef* ones of
// responses: a wsse:KeyIdentifier of ValueType #X509v3 holding the
// certificate (X.509 Token Profile 1.1 §3.2), as WSS4J writes it.
const KeyRefX509v3 = "x509v3"

// Values of egress.response.unsignedFaults.
const (
	// FaultsPass hands a partner's SOAP Fault that carries no
	// WS-Security header to the legacy client as it came (gated): stock
	// stacks (WSS4J, WCF) send faults unsigned by default, and the client
	// must learn that its call failed.
	FaultsPass = "pass"
	// FaultsReject treats an unsigned fault like any response that fails
	// verification: the client gets the uniform 502 fault.
	FaultsReject = "reject"
)

// Egress says how an egress route secures the legacy client's requests
// and what it requires of the partner's responses.
type Egress struct {
	Sign     EgressSign     `mapstructure:"sign"`
	Encrypt  EgressEncrypt  `mapstructure:"encrypt"`
	Response EgressResponse `mapstructure:"response"`
}

// EgressSign is the signature wssgw adds to every outbound request.
type EgressSign struct {
	// CertFile and KeyFile are wssgw's PEM signing certificate (chain,
	// leaf first) and private key: the identity the partner trusts.
	CertFile string `mapstructure:"certFile"`
	KeyFile  string `mapstructure:"keyFile"`
	// KeyReference is how KeyInfo names the certificate: bst (default),
	// issuer-serial, ski, thumbprint or x509v3.
	KeyReference string `mapstructure:"keyReference"`
	// SignatureAlgorithm is a SignatureMethod URI; empty picks RSA-SHA256,
	// ECDSA-SHA256/384/512 or Ed25519 by the key.
	SignatureAlgorithm string `mapstructure:"signatureAlgorithm"`
	// DigestAlgorithm is a DigestMethod URI; SHA-256 by default.
	DigestAlgorithm string `mapstructure:"digestAlgorithm"`
	// Parts are signed: Body (always), Timestamp (a wsu:Timestamp is
	// added only when listed), and header blocks "{namespace}local"
	// present in the request. Default Body and Timestamp.
	Parts []string `mapstructure:"parts"`
	// TimestampTTL is the request Timestamp's lifetime. Default 5m.
	TimestampTTL time.Duration `mapstructure:"timestampTTL"`
}

// EgressEncrypt encrypts the request Body content for the partner after
// signing (sign-then-encrypt). Off while PartnerCertFile is empty.
type EgressEncrypt struct {
	// PartnerCertFile is the PEM certificate (RSA) of the partner.
	PartnerCertFile string `mapstructure:"partnerCertFile"`
	// KeyTransport is the EncryptedKey's algorithm URI: RSA-OAEP,
	// xmlenc#rsa-oaep-mgf1p (the default, WSS4J's) or xmlenc11#rsa-oaep,
	// both with SHA-1 and MGF1-SHA1.
	KeyTransport string `mapstructure:"keyTransport"`
	// DataEncryption is the EncryptedData's algorithm URI: AES-GCM
	// (xmlenc11#aes256-gcm by default, aes128-gcm, aes192-gcm).
	DataEncryption string `mapstructure:"dataEncryption"`
	// KeyReference is how the EncryptedKey names the partner's
	// certificate: issuer-serial (default), ski, thumbprint, bst or
	// x509v3.
	KeyReference string `mapstructure:"keyReference"`
}

// EgressResponse is what the partner's response must prove before the
// legacy client gets its plaintext.
type EgressResponse struct {
	// Policy names the policy (a key of policies) the response is
	// verified against, as an ingress route verifies requests: its
	// require (signature, timestamp, encryption), signedParts, trust (the
	// partner's CA or pinned certificate), decryptionKeys (wssgw's key the
	// partner encrypts for), algorithms and timestamp window.
	Policy string `mapstructure:"policy"`
	// RequireSignatureConfirmation requires signed
	// wsse11:SignatureConfirmations of exactly the request's
	// SignatureValue (WSS 1.1 §8.5).
	RequireSignatureConfirmation bool `mapstructure:"requireSignatureConfirmation"`
	// UnsignedFaults decides a SOAP Fault without a WS-Security header:
	// pass (default) or reject.
	UnsignedFaults string `mapstructure:"unsignedFaults"`
	// MaxBodyBytes bounds a plain SOAP response and the root part of an
	// MTOM one (attachments are bounded by mime.*). Default 10MiB.
	MaxBodyBytes ByteSize `mapstructure:"maxBodyBytes"`
}

// DefaultEgress returns the egress defaults: a BST reference, Body and
// Timestamp signed, a 5 minute Timestamp, RSA-OAEP with AES-256-GCM for
// the partner, unsigned faults passed, 10 MiB responses.
func DefaultEgress() Egress {
	return Egress{
		Sign: EgressSign{
			KeyReference: KeyRefBST,
			Parts:        []string{PartBody, PartTimestamp},
			TimestampTTL: 5 * time.Minute,
		},
		Encrypt: EgressEncrypt{
			KeyTransport:   crypto.AlgRSAOAEPMGF1P,
			DataEncryption: crypto.AlgAES256GCM,
			KeyReference:   KeyRefIssuerSerial,
		},
		Response: EgressResponse{UnsignedFaults: FaultsPass, MaxBodyBytes: 10 << 20},
	}
}

func (e *Egress) applyDefaults() {
	d := DefaultEgress()
	setDefault(&e.Sign.KeyReference, d.Sign.KeyReference)
	if e.Sign.Parts == nil {
		e.Sign.Parts = d.Sign.Parts
	}
	setDefault(&e.Sign.TimestampTTL, d.Sign.TimestampTTL)
	setDefault(&e.Encrypt.KeyTransport, d.Encrypt.KeyTransport)
	setDefault(&e.Encrypt.DataEncryption, d.Encrypt.DataEncryption)
	setDefault(&e.Encrypt.KeyReference, d.Encrypt.KeyReference)
	setDefault(&e.Response.UnsignedFaults, d.Response.UnsignedFaults)
	setDefault(&e.Response.MaxBodyBytes, d.Response.MaxBodyBytes)
}

// SigningKeyOptions converts the signing key files for the crypto package.
func (s EgressSign) SigningKeyOptions() crypto.KeyFileOptions {
	return crypto.KeyFileOptions{CertFile: s.CertFile, KeyFile: s.KeyFile}
}

// IsEgress reports whether the route is of kind egress.
func (r Route) IsEgress() bool { return r.Kind == KindEgress }

// validateKind checks kind and the egress section of route r as a whole:
// an ingress route must not set the egress keys that take effect, an
// egress route needs them. policies are the configured policies.
func (r Route) validateKind(ps *Problems, key string, policies map[string]Policy) {
	if r.Kind != "" { // "": a route built in code, ingress
		checkOneOf(ps, key+".kind", r.Kind, KindIngress, KindEgress)
	}
	e := r.Egress
	if !r.IsEgress() {
		for _, f := range []struct{ name, v string }{
			{"sign.certFile", e.Sign.CertFile}, {"sign.keyFile", e.Sign.KeyFile},
			{"encrypt.partnerCertFile", e.Encrypt.PartnerCertFile}, {"response.policy", e.Response.Policy},
		} {
			if f.v != "" {
				ps.add(key+".egress."+f.name, "is set but kind is %q (egress keys need kind: %s), got %q", r.Kind, KindEgress, f.v)
			}
		}
		return
	}
	if r.Policy != PolicyNone {
		// The request comes from the legacy client in plaintext; what is
		// verified is the partner's response, by egress.response.policy.
		ps.add(key+".policy", "must be %q on an egress route (the partner's responses are verified by egress.response.policy), got %q", PolicyNone, r.Policy)
	}
	if r.UnsafeSkipGate {
		ps.add(key+".unsafeSkipGate", "is not valid on an egress route: the request is parsed to be signed")
	}
	e.Sign.validate(ps, key+".egress.sign")
	e.Encrypt.validate(ps, key+".egress.encrypt")
	e.Response.validate(ps, key+".egress.response", policies)
}

func (s EgressSign) validate(ps *Problems, key string) {
	switch {
	case s.CertFile == "":
		ps.add(key+".certFile", "is required on an egress route: wssgw signs every outbound request")
	case s.KeyFile == "":
		ps.add(key+".keyFile", "is required on an egress route: wssgw signs every outbound request")
	default:
		if _, err := crypto.LoadKeyPair(s.SigningKeyOptions()); err != nil {
			ps.add(key+".certFile", "cannot load the signing key pair (%s, %s): %v", s.CertFile, s.KeyFile, err)
		}
	}
	checkOneOf(ps, key+".keyReference", s.KeyReference, KeyRefBST, KeyRefIssuerSerial, KeyRefSKI, KeyRefThumbprint, KeyRefX509v3)
	checkAlgorithm(ps, key+".signatureAlgorithm", s.SignatureAlgorithm, crypto.ClassSignature)
	checkAlgorithm(ps, key+".digestAlgorithm", s.DigestAlgorithm, crypto.ClassDigest)
	body := false
	for i, p := range s.Parts {
		checkPart(ps, fmt.Sprintf("%s.parts[%d]", key, i), p, PartBody, PartTimestamp)
		body = body || p == PartBody
	}
	if !body {
		ps.add(key+".parts", "must include %s (the signature always covers the Body), got %v", PartBody, s.Parts)
	}
	checkPositive(ps, key+".timestampTTL", s.TimestampTTL)
}

// checkAlgorithm accepts "" (the default) or a URI of the class.
func checkAlgorithm(ps *Problems, key, uri string, class crypto.AlgorithmClass) {
	if uri == "" {
		return
	}
	if c, ok := crypto.Classify(uri); !ok || c != class {
		ps.add(key, "must be a %s algorithm URI, got %q", class, uri)
	}
}

func (e EgressEncrypt) validate(ps *Problems, key string) {
	// What the signer can produce (internal/signer): RSA-OAEP key
	// transport, AES-GCM content encryption.
	checkOneOf(ps, key+".keyTransport", e.KeyTransport, crypto.AlgRSAOAEPMGF1P, crypto.AlgRSAOAEP)
	checkOneOf(ps, key+".dataEncryption", e.DataEncryption, crypto.AlgAES256GCM, crypto.AlgAES192GCM, crypto.AlgAES128GCM)
	checkOneOf(ps, key+".keyReference", e.KeyReference, KeyRefIssuerSerial, KeyRefSKI, KeyRefThumbprint, KeyRefBST, KeyRefX509v3)
	if e.PartnerCertFile == "" {
		return
	}
	certs, err := crypto.LoadCertificates(e.PartnerCertFile)
	if err != nil {
		ps.add(key+".partnerCertFile", "cannot load %s: %v", e.PartnerCertFile, err)
		return
	}
	if len(certs) == 0 || certs[0].PublicKeyAlgorithm != x509.RSA {
		ps.add(key+".partnerCertFile", "must hold the partner's RSA certificate (RSA-OAEP key transport), got %s", e.PartnerCertFile)
	}
}

func (r EgressResponse) validate(ps *Problems, key string, policies map[string]Policy) {
	checkOneOf(ps, key+".unsignedFaults", r.UnsignedFaults, FaultsPass, FaultsReject)
	if r.MaxBodyBytes <= 0 {
		ps.add(key+".maxBodyBytes", "must be positive, got %d", int64(r.MaxBodyBytes))
	}
	if r.Policy == "" {
		ps.add(key+".policy", "is required on an egress route: the policy the partner's responses must meet")
		return
	}
	p, ok := policies[r.Policy]
	if !ok {
		ps.add(key+".policy", "unknown policy %q", r.Policy)
		return
	}
	if p.Responses.Sign {
		ps.add(key+".policy", "policy %q signs responses (responses.sign), which means nothing for a partner's response", r.Policy)
	}
	if r.RequireSignatureConfirmation && !p.Has(RequireSignature) {
		ps.add(key+".requireSignatureConfirmation", "needs %q in policy %q's require: only a trusted signature makes a confirmation worth anything", RequireSignature, r.Policy)
	}
}

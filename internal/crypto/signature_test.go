package crypto

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"io"
	"math/big"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/testvectors"
)

type sigKeys struct {
	rsa              *rsa.PrivateKey
	p256, p384, p521 *ecdsa.PrivateKey
	ed               ed25519.PrivateKey
	mac              HMACKey
}

func newSigKeys(t testing.TB) sigKeys {
	gen := func(c elliptic.Curve) *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		require.NoError(t, err)
		return k
	}
	mac := make(HMACKey, 32)
	_, _ = rand.Read(mac)
	return sigKeys{rsa: testpki.RSAKey(t, 2048), p256: gen(elliptic.P256()), p384: gen(elliptic.P384()),
		p521: gen(elliptic.P521()), ed: testpki.EdKey(t), mac: mac}
}

// opaqueSigner hides the concrete key type, as a hardware key would, so the
// generic crypto.Signer paths (ASN.1 ECDSA output) are exercised.
type opaqueSigner struct{ s crypto.Signer }

func (o opaqueSigner) Public() crypto.PublicKey { return o.s.Public() }
func (o opaqueSigner) Sign(r io.Reader, d []byte, opts crypto.SignerOpts) ([]byte, error) {
	return o.s.Sign(r, d, opts)
}

func TestSignVerifyRoundTrip(t *testing.T) {
	k := newSigKeys(t)
	si := []byte(`<ds:SignedInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#">...</ds:SignedInfo>`)
	tests := []struct {
		name   string
		alg    string
		signer any
		verify any
		size   int // expected SignatureValue length, 0 = RSA modulus size
	}{
		{"ok/rsa-sha1", AlgRSASHA1, k.rsa, &k.rsa.PublicKey, 0},
		{"ok/rsa-sha224", AlgRSASHA224, k.rsa, &k.rsa.PublicKey, 0},
		{"ok/rsa-sha256", AlgRSASHA256, k.rsa, &k.rsa.PublicKey, 0},
		{"ok/rsa-sha384", AlgRSASHA384, k.rsa, &k.rsa.PublicKey, 0},
		{"ok/rsa-sha512", AlgRSASHA512, k.rsa, &k.rsa.PublicKey, 0},
		{"ok/rsa-pss-sha256", AlgRSAPSSSHA256, k.rsa, &k.rsa.PublicKey, 0},
		{"ok/rsa-pss-sha384", AlgRSAPSSSHA384, k.rsa, &k.rsa.PublicKey, 0},
		{"ok/rsa-pss-sha512", AlgRSAPSSSHA512, k.rsa, &k.rsa.PublicKey, 0},
		{"ok/rsa-sha256-opaque-signer", AlgRSASHA256, opaqueSigner{k.rsa}, &k.rsa.PublicKey, 0},
		{"ok/ecdsa-sha1-p256", AlgECDSASHA1, k.p256, &k.p256.PublicKey, 64},
		{"ok/ecdsa-sha224-p256", AlgECDSASHA224, k.p256, &k.p256.PublicKey, 64},
		{"ok/ecdsa-sha256-p256", AlgECDSASHA256, k.p256, &k.p256.PublicKey, 64},
		{"ok/ecdsa-sha384-p384", AlgECDSASHA384, k.p384, &k.p384.PublicKey, 96},
		{"ok/ecdsa-sha512-p521", AlgECDSASHA512, k.p521, &k.p521.PublicKey, 132},
		{"ok/ecdsa-sha256-p521", AlgECDSASHA256, k.p521, &k.p521.PublicKey, 132},
		{"ok/ecdsa-opaque-signer-der-to-raw", AlgECDSASHA256, opaqueSigner{k.p256}, &k.p256.PublicKey, 64},
		{"ok/ecdsa-opaque-signer-p521", AlgECDSASHA512, opaqueSigner{k.p521}, &k.p521.PublicKey, 132},
		{"ok/ed25519", AlgEd25519, k.ed, k.ed.Public(), 64},
		{"ok/ed25519-opaque-signer", AlgEd25519, opaqueSigner{k.ed}, k.ed.Public(), 64},
		{"ok/hmac-sha1", AlgHMACSHA1, k.mac, k.mac, 20},
		{"ok/hmac-sha224", AlgHMACSHA224, k.mac, k.mac, 28},
		{"ok/hmac-sha256", AlgHMACSHA256, k.mac, k.mac, 32},
		{"ok/hmac-sha384", AlgHMACSHA384, k.mac, k.mac, 48},
		{"ok/hmac-sha512", AlgHMACSHA512, k.mac, k.mac, 64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sig, err := Sign(tc.alg, tc.signer, si)
			require.NoError(t, err)
			want := tc.size
			if want == 0 {
				want = k.rsa.Size()
			}
			require.Len(t, sig, want)
			require.NoError(t, verifySig(tc.alg, tc.verify, si, sig))

			bad := append([]byte(nil), si...)
			bad[len(bad)-3] ^= 1
			require.ErrorIs(t, verifySig(tc.alg, tc.verify, bad, sig), ErrSignature, "other SignedInfo")
			sig[len(sig)/2] ^= 0x40
			require.ErrorIs(t, verifySig(tc.alg, tc.verify, si, sig), ErrSignature, "altered SignatureValue")
		})
	}
}

func TestVerifySignatureKeyBinding(t *testing.T) {
	k := newSigKeys(t)
	si := []byte("<SignedInfo/>")
	sigFor := func(alg string, key any) []byte {
		s, err := Sign(alg, key, si)
		require.NoError(t, err)
		return s
	}
	spki, err := x509.MarshalPKIXPublicKey(&k.rsa.PublicKey)
	require.NoError(t, err)
	// GHSA-c27r-x354-4m68: the attacker knows the public key, so an HMAC
	// keyed with its encoding is a forgery if the verifier allows it.
	forged := hmac.New(sha256.New, spki)
	forged.Write(si)
	forgedMAC := forged.Sum(nil)

	tests := []struct {
		name string
		alg  string
		key  any
		sig  []byte
		err  error
	}{
		{"fail/hmac-with-rsa-public-key", AlgHMACSHA256, &k.rsa.PublicKey, forgedMAC, ErrAlgorithmKey},
		{"fail/hmac-with-plain-bytes", AlgHMACSHA256, spki, forgedMAC, ErrAlgorithmKey},
		{"fail/hmac-with-ecdsa-key", AlgHMACSHA256, &k.p256.PublicKey, forgedMAC, ErrAlgorithmKey},
		{"fail/hmac-with-ed25519-key", AlgHMACSHA256, k.ed.Public(), forgedMAC, ErrAlgorithmKey},
		{"fail/hmac-empty-key", AlgHMACSHA256, HMACKey{}, forgedMAC, ErrAlgorithmKey},
		{"fail/rsa-with-hmac-key", AlgRSASHA256, HMACKey(spki), sigFor(AlgRSASHA256, k.rsa), ErrAlgorithmKey},
		{"fail/rsa-with-private-key", AlgRSASHA256, k.rsa, sigFor(AlgRSASHA256, k.rsa), ErrAlgorithmKey},
		{"fail/rsa-with-ecdsa-key", AlgRSASHA256, &k.p256.PublicKey, sigFor(AlgRSASHA256, k.rsa), ErrAlgorithmKey},
		{"fail/rsa-nil-key", AlgRSASHA256, (*rsa.PublicKey)(nil), sigFor(AlgRSASHA256, k.rsa), ErrAlgorithmKey},
		{"fail/pss-with-ecdsa-key", AlgRSAPSSSHA256, &k.p256.PublicKey, sigFor(AlgRSAPSSSHA256, k.rsa), ErrAlgorithmKey},
		{"fail/ecdsa-with-rsa-key", AlgECDSASHA256, &k.rsa.PublicKey, sigFor(AlgECDSASHA256, k.p256), ErrAlgorithmKey},
		{"fail/ecdsa-with-ed25519-key", AlgECDSASHA256, k.ed.Public(), sigFor(AlgECDSASHA256, k.p256), ErrAlgorithmKey},
		{"fail/ed25519-with-ecdsa-key", AlgEd25519, &k.p256.PublicKey, sigFor(AlgEd25519, k.ed), ErrAlgorithmKey},
		{"fail/ed25519-short-key-no-panic", AlgEd25519, ed25519.PublicKey(make([]byte, 31)), sigFor(AlgEd25519, k.ed), ErrAlgorithmKey},
		{"fail/ed25519-private-key", AlgEd25519, k.ed, sigFor(AlgEd25519, k.ed), ErrAlgorithmKey},
		{"fail/rsa-sig-as-pss", AlgRSAPSSSHA256, &k.rsa.PublicKey, sigFor(AlgRSASHA256, k.rsa), ErrSignature},
		{"fail/rsa-sha256-sig-as-sha512", AlgRSASHA512, &k.rsa.PublicKey, sigFor(AlgRSASHA256, k.rsa), ErrSignature},
		{"fail/hmac-sha256-sig-as-sha512", AlgHMACSHA512, k.mac, append(sigFor(AlgHMACSHA256, k.mac), make([]byte, 32)...), ErrSignature},
		{"fail/unknown-algorithm", "http://www.w3.org/2000/09/xmldsig#dsa-sha1", &k.rsa.PublicKey, []byte{1}, ErrUnsupportedAlgorithm},
		{"fail/digest-uri-as-signature", AlgDigestSHA256, HMACKey("k"), []byte{1}, ErrUnsupportedAlgorithm},
		{"fail/pss-with-params-not-supported", "http://www.w3.org/2007/05/xmldsig-more#rsa-pss", &k.rsa.PublicKey, sigFor(AlgRSAPSSSHA256, k.rsa), ErrUnsupportedAlgorithm},
		{"ok/hmac-right-key", AlgHMACSHA256, k.mac, sigFor(AlgHMACSHA256, k.mac), nil},
		{"ok/hmac-with-spki-only-if-configured-so", AlgHMACSHA256, HMACKey(spki), forgedMAC, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verifySig(tc.alg, tc.key, si, tc.sig)
			if tc.err == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.err)
		})
	}
}

func TestVerifyECDSAEncoding(t *testing.T) {
	k := newSigKeys(t)
	si := []byte("<SignedInfo>ecdsa</SignedInfo>")
	d := sha256.Sum256(si)
	r, s, err := ecdsa.Sign(rand.Reader, k.p256, d[:])
	require.NoError(t, err)
	raw := make([]byte, 64)
	r.FillBytes(raw[:32])
	s.FillBytes(raw[32:])
	der, err := ecdsa.SignASN1(rand.Reader, k.p256, d[:])
	require.NoError(t, err)
	n := elliptic.P256().Params().N
	malleated := make([]byte, 64)
	r.FillBytes(malleated[:32])
	new(big.Int).Sub(n, s).FillBytes(malleated[32:])
	withN := make([]byte, 64) // r = n: in range for the encoding, not for ECDSA
	n.FillBytes(withN[:32])
	s.FillBytes(withN[32:])
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	require.NoError(t, err)

	tests := []struct {
		name string
		key  *ecdsa.PublicKey
		sig  []byte
		err  error
	}{
		{"ok/raw-r-s", &k.p256.PublicKey, raw, nil},
		// ECDSA is malleable (s -> n-s) and XMLDSig does not forbid it: the
		// replay cache must never key on SignatureValue (research §1 D6).
		{"ok/malleated-s-still-valid", &k.p256.PublicKey, malleated, nil},
		{"fail/der-encoding", &k.p256.PublicKey, der, ErrSignature},
		{"fail/one-byte-short", &k.p256.PublicKey, raw[:63], ErrSignature},
		{"fail/zero-padded", &k.p256.PublicKey, append([]byte{0}, raw...), ErrSignature},
		{"fail/halves-padded", &k.p256.PublicKey, append(append(append([]byte{0}, raw[:32]...), 0), raw[32:]...), ErrSignature},
		{"fail/empty", &k.p256.PublicKey, nil, ErrSignature},
		{"fail/zero-r-s", &k.p256.PublicKey, make([]byte, 64), ErrSignature},
		{"fail/r-equals-n", &k.p256.PublicKey, withN, ErrSignature},
		{"fail/p256-sig-for-p384-key", &k.p384.PublicKey, raw, ErrSignature},
		{"fail/p224-unsupported", &p224.PublicKey, make([]byte, 56), ErrUnsupportedKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verifySig(AlgECDSASHA256, tc.key, si, tc.sig)
			if tc.err == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.err)
		})
	}
}

func TestVerifyRSAPSSParameters(t *testing.T) {
	k := testpki.RSAKey(t, 2048)
	si := []byte("<SignedInfo>pss</SignedInfo>")
	d := sha256.Sum256(si)
	sign := func(salt int) []byte {
		s, err := rsa.SignPSS(rand.Reader, k, crypto.SHA256, d[:], &rsa.PSSOptions{SaltLength: salt})
		require.NoError(t, err)
		return s
	}
	tests := []struct {
		name string
		sig  []byte
		err  error
	}{
		{"ok/salt-equals-hash-length", sign(32), nil},
		{"fail/salt-max-length", sign(rsa.PSSSaltLengthAuto), ErrSignature},
		{"fail/salt-zero", sign(0), ErrSignature},
		{"fail/salt-20", sign(20), ErrSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verifySig(AlgRSAPSSSHA256, &k.PublicKey, si, tc.sig)
			if tc.err == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.err)
		})
	}
}

func TestVerifyHMAC(t *testing.T) {
	// RFC 4231 §4.3 (test case 2) and RFC 2202 §3 (test case 2).
	key := HMACKey("Jefe")
	msg := []byte("what do ya want for nothing?")
	sha256MAC, _ := hex.DecodeString("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
	sha1MAC, _ := hex.DecodeString("effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
	tests := []struct {
		name string
		alg  string
		sig  []byte
		err  error
	}{
		{"ok/rfc4231-sha256", AlgHMACSHA256, sha256MAC, nil},
		{"ok/rfc2202-sha1", AlgHMACSHA1, sha1MAC, nil},
		// CVE-2009-0217: a truncated MAC is refused however short.
		{"fail/truncated-128-bits", AlgHMACSHA256, sha256MAC[:16], ErrSignature},
		{"fail/truncated-80-bits", AlgHMACSHA1, sha1MAC[:10], ErrSignature},
		{"fail/truncated-to-zero", AlgHMACSHA256, nil, ErrSignature},
		{"fail/extended", AlgHMACSHA256, append(append([]byte(nil), sha256MAC...), 0), ErrSignature},
		{"fail/last-bit", AlgHMACSHA256, append(append([]byte(nil), sha256MAC[:31]...), sha256MAC[31]^1), ErrSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verifySig(tc.alg, key, msg, tc.sig)
			if tc.err == nil {
				require.NoError(t, err)
				got, err := Sign(tc.alg, key, msg)
				require.NoError(t, err)
				assert.Equal(t, tc.sig, got)
				return
			}
			require.ErrorIs(t, err, tc.err)
		})
	}
}

func TestSignErrors(t *testing.T) {
	k := newSigKeys(t)
	tests := []struct {
		name string
		alg  string
		key  any
		err  error
	}{
		{"fail/hmac-with-signer", AlgHMACSHA256, k.rsa, ErrAlgorithmKey},
		{"fail/hmac-with-plain-bytes", AlgHMACSHA256, []byte("secret"), ErrAlgorithmKey},
		{"fail/rsa-with-ecdsa-signer", AlgRSASHA256, k.p256, ErrAlgorithmKey},
		{"fail/pss-with-ed25519-signer", AlgRSAPSSSHA256, k.ed, ErrAlgorithmKey},
		{"fail/ecdsa-with-rsa-signer", AlgECDSASHA256, k.rsa, ErrAlgorithmKey},
		{"fail/ed25519-with-rsa-signer", AlgEd25519, k.rsa, ErrAlgorithmKey},
		{"fail/rsa-with-hmac-key", AlgRSASHA256, k.mac, ErrAlgorithmKey},
		{"fail/rsa-with-public-key", AlgRSASHA256, &k.rsa.PublicKey, ErrAlgorithmKey},
		{"fail/nil-key", AlgRSASHA256, nil, ErrAlgorithmKey},
		{"fail/unknown-alg", "urn:x", k.rsa, ErrUnsupportedAlgorithm},
		{"fail/cipher-uri", AlgAES256GCM, k.mac, ErrUnsupportedAlgorithm},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sig, err := Sign(tc.alg, tc.key, []byte("x"))
			require.ErrorIs(t, err, tc.err)
			assert.Nil(t, sig)
		})
	}
}

func TestHMACOutputBits(t *testing.T) {
	tests := []struct {
		name string
		alg  string
		want int
	}{
		{"ok/sha1", AlgHMACSHA1, 160},
		{"ok/sha224", AlgHMACSHA224, 224},
		{"ok/sha256", AlgHMACSHA256, 256},
		{"ok/sha384", AlgHMACSHA384, 384},
		{"ok/sha512", AlgHMACSHA512, 512},
		{"fail/rsa", AlgRSASHA256, 0},
		{"fail/digest", AlgDigestSHA256, 0},
		{"fail/unknown", "urn:x", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, HMACOutputBits(tc.alg))
		})
	}
}

func TestSignatureKeyBits(t *testing.T) {
	k := newSigKeys(t)
	tests := []struct {
		name string
		key  any
		want int
	}{
		{"ok/rsa-public", &k.rsa.PublicKey, 2048},
		{"ok/rsa-private", k.rsa, 2048},
		{"ok/rsa-opaque-signer", opaqueSigner{k.rsa}, 2048},
		{"ok/p256", &k.p256.PublicKey, 256},
		{"ok/p384-private", k.p384, 384},
		{"ok/p521", &k.p521.PublicKey, 521},
		{"ok/ed25519-public", k.ed.Public(), 256},
		{"ok/ed25519-private", k.ed, 256},
		{"ok/hmac", k.mac, 256},
		{"ok/hmac-short", HMACKey("Jefe"), 32},
		{"fail/plain-bytes", []byte("secret"), 0},
		{"fail/nil", nil, 0},
		{"fail/nil-rsa", (*rsa.PublicKey)(nil), 0},
		{"fail/short-ed25519", ed25519.PublicKey{1}, 0},
		{"fail/other", 42, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, SignatureKeyBits(tc.key))
		})
	}
}

// TestVerifyWSS4JSignature checks interop of rsa-sha256 with the committed
// WSS4J vector: its SignedInfo, canonicalized here by hand (exclusive c14n
// with InclusiveNamespaces "soapenv": the ds and soapenv declarations move
// onto SignedInfo, empty elements get end tags), verifies with the client
// certificate.
func TestVerifyWSS4JSignature(t *testing.T) {
	msg, err := os.ReadFile(testvectors.Path(t, "wss4j/sign-bst/0000.xml"))
	require.NoError(t, err)
	certs, err := LoadCertificates(testvectors.Path(t, "wss4j/keys/client.crt"))
	require.NoError(t, err)
	pub := certs[0].PublicKey.(*rsa.PublicKey)

	m := regexp.MustCompile(`<ds:SignedInfo>(.*?)</ds:SignedInfo>`).FindSubmatch(msg)
	require.NotNil(t, m)
	inner := regexp.MustCompile(`<([\w:]+)([^<>]*?)/>`).ReplaceAll(m[1], []byte(`<$1$2></$1>`))
	c14n := append([]byte(`<ds:SignedInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#" xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">`), inner...)
	c14n = append(c14n, "</ds:SignedInfo>"...)
	sv := regexp.MustCompile(`<ds:SignatureValue>([^<]*)</ds:SignatureValue>`).FindSubmatch(msg)
	require.NotNil(t, sv)
	sig, err := base64.StdEncoding.DecodeString(string(sv[1]))
	require.NoError(t, err)

	require.Contains(t, string(c14n), `Algorithm="`+AlgRSASHA256+`"`)
	require.NoError(t, verifySig(AlgRSASHA256, pub, c14n, sig))
	require.ErrorIs(t, verifySig(AlgRSAPSSSHA256, pub, c14n, sig), ErrSignature)
	c14n[len(c14n)-20] ^= 1
	require.ErrorIs(t, verifySig(AlgRSASHA256, pub, c14n, sig), ErrSignature)
}

func BenchmarkVerifySignature(b *testing.B) {
	k := newSigKeys(b)
	si := make([]byte, 1024)
	for _, bc := range []struct {
		name   string
		alg    string
		signer any
		verify any
	}{
		{"rsa2048-sha256", AlgRSASHA256, k.rsa, &k.rsa.PublicKey},
		{"rsa2048-pss-sha256", AlgRSAPSSSHA256, k.rsa, &k.rsa.PublicKey},
		{"ecdsa-p256-sha256", AlgECDSASHA256, k.p256, &k.p256.PublicKey},
		{"ed25519", AlgEd25519, k.ed, k.ed.Public()},
		{"hmac-sha256", AlgHMACSHA256, k.mac, k.mac},
	} {
		sig, err := Sign(bc.alg, bc.signer, si)
		require.NoError(b, err)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := verifySig(bc.alg, bc.verify, si, sig); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSign(b *testing.B) {
	k := newSigKeys(b)
	si := make([]byte, 1024)
	for _, bc := range []struct {
		name string
		alg  string
		key  any
	}{
		{"rsa2048-sha256", AlgRSASHA256, k.rsa},
		{"ecdsa-p256-sha256", AlgECDSASHA256, k.p256},
		{"ed25519", AlgEd25519, k.ed},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Sign(bc.alg, bc.key, si); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// verifySig verifies the way the engines do, through VerifySignatureSHA256
// with the SHA-256 of signedInfo.
func verifySig(alg string, key any, signedInfo, sigValue []byte) error {
	sum := sha256.Sum256(signedInfo)
	return VerifySignatureSHA256(alg, key, signedInfo, &sum, sigValue)
}

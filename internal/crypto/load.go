package crypto

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"software.sslmate.com/src/go-pkcs12"
)

// DefaultMinRSABits is the smallest RSA modulus accepted unless configured.
const DefaultMinRSABits = 2048

// KeyFileOptions says where a local key pair comes from: either PEM files
// (CertFile with the chain, leaf first or in any order; KeyFile with the
// private key, which may be the same file) or a PKCS#12 file with a password
// given inline or in PasswordFile.
type KeyFileOptions struct {
	CertFile     string
	KeyFile      string
	PKCS12File   string
	Password     string
	PasswordFile string
	MinRSABits   int // 0 means DefaultMinRSABits
}

// Files lists the files the options read (for the reloader).
func (o KeyFileOptions) Files() []string {
	var fs []string
	for _, f := range []string{o.CertFile, o.KeyFile, o.PKCS12File, o.PasswordFile} {
		if f != "" {
			fs = append(fs, f)
		}
	}
	return fs
}

// KeyPair is a private key with its certificate chain.
type KeyPair struct {
	Certificate *x509.Certificate   // the leaf, matching Signer
	Chain       []*x509.Certificate // leaf first, then the rest as given
	// Signer is the private key in the build's Backend: an
	// *rsa.PrivateKey, *ecdsa.PrivateKey or ed25519.PrivateKey in a Go
	// build; in an OpenSSL build an RSA key is OpenSSL's (a crypto.Signer
	// and crypto.Decrypter), so code must not assert the concrete type.
	Signer crypto.Signer
}

// Decrypter returns the key as a crypto.Decrypter when it is one (RSA).
func (k *KeyPair) Decrypter() (crypto.Decrypter, bool) {
	d, ok := k.Signer.(crypto.Decrypter)
	return d, ok
}

// LoadKeyPair loads and checks a key pair: supported key type and size, and
// the private key matching the leaf certificate.
func LoadKeyPair(o KeyFileOptions) (*KeyPair, error) {
	var (
		key   any
		certs []*x509.Certificate
		err   error
	)
	switch {
	case o.PKCS12File != "":
		key, certs, err = loadPKCS12(o)
	case o.CertFile != "":
		key, certs, err = loadPEMPair(o)
	default:
		err = fmt.Errorf("crypto: no certificate or PKCS#12 file configured: %w", ErrLoad)
	}
	if err != nil {
		return nil, err
	}
	return newKeyPair(key, certs, o.MinRSABits)
}

func newKeyPair(key any, certs []*x509.Certificate, minRSA int) (*KeyPair, error) {
	var err error
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("crypto: private key %T: %w", key, ErrUnsupportedKey)
	}
	if err := CheckPublicKey(signer.Public(), minRSA); err != nil {
		return nil, err
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return nil, fmt.Errorf("crypto: public key %T: %w", signer.Public(), ErrUnsupportedKey)
	}
	for i, c := range certs {
		if pub.Equal(c.PublicKey) {
			chain := append([]*x509.Certificate{c}, certs[:i]...)
			chain = append(chain, certs[i+1:]...)
			// The key moves into the build's backend here, once per
			// (re)load, never per message (issue 18).
			if signer, err = backendKey(signer); err != nil {
				return nil, err
			}
			return &KeyPair{Certificate: c, Chain: chain, Signer: signer}, nil
		}
	}
	return nil, fmt.Errorf("crypto: no certificate among %d matches the private key: %w", len(certs), ErrKeyMismatch)
}

// CheckPublicKey accepts RSA keys of at least minRSABits (DefaultMinRSABits
// when 0), ECDSA on P-256 or P-384, and Ed25519.
func CheckPublicKey(pub crypto.PublicKey, minRSABits int) error {
	if minRSABits <= 0 {
		minRSABits = DefaultMinRSABits
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if n := k.N.BitLen(); n < minRSABits {
			return fmt.Errorf("crypto: RSA key of %d bits, need %d: %w", n, minRSABits, ErrKeyTooWeak)
		}
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() && k.Curve != elliptic.P384() {
			return fmt.Errorf("crypto: ECDSA curve %s: %w", k.Curve.Params().Name, ErrUnsupportedKey)
		}
	case ed25519.PublicKey:
	default:
		return fmt.Errorf("crypto: public key %T: %w", pub, ErrUnsupportedKey)
	}
	return nil
}

func loadPEMPair(o KeyFileOptions) (any, []*x509.Certificate, error) {
	certs, err := LoadCertificates(o.CertFile)
	if err != nil {
		return nil, nil, err
	}
	kf := o.KeyFile
	if kf == "" {
		kf = o.CertFile
	}
	data, err := readFile(kf)
	if err != nil {
		return nil, nil, err
	}
	key, err := ParsePrivateKeyPEM(data)
	if err != nil {
		return nil, nil, inFile(kf, err)
	}
	return key, certs, nil
}

func loadPKCS12(o KeyFileOptions) (any, []*x509.Certificate, error) {
	data, err := readFile(o.PKCS12File)
	if err != nil {
		return nil, nil, err
	}
	pw := o.Password
	if o.PasswordFile != "" {
		b, err := readFile(o.PasswordFile)
		if err != nil {
			return nil, nil, err
		}
		pw = strings.TrimRight(string(b), "\r\n")
	}
	key, leaf, cas, err := pkcs12.DecodeChain(data, pw)
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		return nil, nil, fmt.Errorf("crypto: %s: %w", o.PKCS12File, ErrBadPassword)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("crypto: %s: %v: %w", o.PKCS12File, err, ErrLoad)
	}
	return key, append([]*x509.Certificate{leaf}, cas...), nil
}

// ParsePrivateKeyPEM returns the first private key in data: PKCS#8,
// PKCS#1 RSA or SEC1 EC. Encrypted keys are rejected with ErrEncryptedKey.
func ParsePrivateKeyPEM(data []byte) (any, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, fmt.Errorf("crypto: no PEM private key found: %w", ErrLoad)
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED") {
			return nil, fmt.Errorf("crypto: PEM block %q: %w", b.Type, ErrEncryptedKey)
		}
		key, err := parseKeyBlock(b)
		if key != nil || err != nil {
			return key, err
		}
	}
}

func parseKeyBlock(b *pem.Block) (any, error) {
	var (
		key any
		err error
	)
	switch b.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("crypto: PEM block %q: %v: %w", b.Type, err, ErrLoad)
	}
	return key, nil
}

// ParseCertificates parses PEM "CERTIFICATE" blocks (other blocks are
// skipped) or, when data holds no PEM, one DER certificate.
func ParseCertificates(data []byte) ([]*x509.Certificate, error) {
	if !bytes.Contains(data, []byte("-----BEGIN")) {
		c, err := x509.ParseCertificate(data)
		if err != nil {
			return nil, fmt.Errorf("crypto: DER certificate: %v: %w", err, ErrLoad)
		}
		return []*x509.Certificate{c}, nil
	}
	var certs []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("crypto: certificate: %v: %w", err, ErrLoad)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("crypto: no PEM certificate found: %w", ErrLoad)
	}
	return certs, nil
}

// LoadCertificates reads certificates from every file, in order.
func LoadCertificates(files ...string) ([]*x509.Certificate, error) {
	var all []*x509.Certificate
	for _, f := range files {
		data, err := readFile(f)
		if err != nil {
			return nil, err
		}
		cs, err := ParseCertificates(data)
		if err != nil {
			return nil, inFile(f, err)
		}
		all = append(all, cs...)
	}
	return all, nil
}

func readFile(f string) ([]byte, error) {
	b, err := os.ReadFile(f)
	if err != nil {
		return nil, fmt.Errorf("crypto: %v: %w", err, ErrLoad)
	}
	return b, nil
}

// fileError names the file an error of this package came from, keeping a
// single "crypto: " prefix.
type fileError struct {
	file string
	err  error
}

func inFile(file string, err error) error { return &fileError{file, err} }

func (e *fileError) Error() string {
	return "crypto: " + e.file + ": " + strings.TrimPrefix(e.err.Error(), "crypto: ")
}

func (e *fileError) Unwrap() error { return e.err }

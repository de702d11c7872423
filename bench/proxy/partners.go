package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // RFC 5280 §4.2.1.2's SubjectKeyIdentifier, not a security use
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
)

// newPartnerKeys makes k RSA-2048 key pairs with self-signed
// certificates: the new partners of the fresh-shape scenario, each with a
// certificate of its own, as real partners have, rather than the mix's
// key that the fresh-shape flood signs with. wssgw's first-sight lanes are
// per claimed signer (issue 14), so a flood under one key must not take
// the lane of a partner under another. The certificates are pinned in the
// mix policy (pinnedCertFiles: trusted directly and indexed for the
// thumbprint, SKI and IssuerSerial references; knownCertFiles alone would
// index them without trusting them). Key generation is slow, so the keys
// are made on every core, before wssgw starts.
func newPartnerKeys(k int) ([]*wcrypto.KeyPair, error) {
	out := make([]*wcrypto.KeyPair, k)
	errs := make([]error, k)
	w := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for j := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := j; i < k; i += w {
				out[i], errs[i] = selfSigned(fmt.Sprintf("bench new partner %d", i+1))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("new partner key: %w", err)
		}
	}
	return out, nil
}

// selfSigned is an RSA-2048 key and a self-signed certificate for name,
// valid from an hour ago for a week, for signing only, with a
// SubjectKeyIdentifier (the SKI key reference needs one; Go makes it
// only for CAs).
func selfSigned(name string) (*wcrypto.KeyPair, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	// RFC 5280 §4.2.1.2 method (1): SHA-1 of the subjectPublicKey bits,
	// for RSA the PKCS#1 public key.
	ski := sha1.Sum(x509.MarshalPKCS1PublicKey(&key.PublicKey)) //nolint:gosec // see import
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name, Organization: []string{"wssgw bench-proxy"}},
		NotBefore:    now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		SubjectKeyId: ski[:],
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &wcrypto.KeyPair{Certificate: cert, Chain: []*x509.Certificate{cert}, Signer: key}, nil
}

// writeCerts writes each key pair's certificate as a PEM file into dir
// and returns the files' paths.
func writeCerts(dir string, kps []*wcrypto.KeyPair) ([]string, error) {
	files := make([]string, len(kps))
	for i, kp := range kps {
		files[i] = filepath.Join(dir, fmt.Sprintf("new-partner-%d.crt", i+1))
		b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: kp.Certificate.Raw})
		if err := os.WriteFile(files[i], b, 0o600); err != nil {
			return nil, err
		}
	}
	return files, nil
}

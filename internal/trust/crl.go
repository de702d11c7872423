package trust

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"time"

	"github.com/wssgw/wssgw/internal/crypto"
)

// crlSet holds the revoked serial numbers per issuer (by raw subject).
type crlSet struct {
	revoked    map[string]map[string]struct{} // issuer raw subject -> serial hex
	nextUpdate map[string]time.Time           // earliest NextUpdate per issuer
}

// loadCRLs reads CRL files (PEM "X509 CRL" or DER). Each CRL must be signed
// by one of the issuers (configured CAs and intermediates); one whose
// NextUpdate is before now is an error unless allowExpired.
func loadCRLs(files []string, issuers []*x509.Certificate, now time.Time, allowExpired bool) (*crlSet, error) {
	s := &crlSet{revoked: map[string]map[string]struct{}{}, nextUpdate: map[string]time.Time{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("crypto: %v: %w", err, crypto.ErrLoad)
		}
		if err := s.add(data, issuers, now, allowExpired); err != nil {
			return nil, fmt.Errorf("crypto: %s: CRL: %w", f, err)
		}
	}
	return s, nil
}

func (s *crlSet) add(data []byte, issuers []*x509.Certificate, now time.Time, allowExpired bool) error {
	if bytes.Contains(data, []byte("-----BEGIN")) {
		b, _ := pem.Decode(data)
		if b == nil || b.Type != "X509 CRL" {
			return fmt.Errorf("no PEM \"X509 CRL\" block: %w", ErrCRL)
		}
		data = b.Bytes
	}
	rl, err := x509.ParseRevocationList(data)
	if err != nil {
		return fmt.Errorf("%v: %w", err, ErrCRL)
	}
	iss := crlIssuer(rl, issuers)
	if iss == nil {
		return fmt.Errorf("not signed by a configured CA: %w", ErrCRL)
	}
	if !allowExpired && !rl.NextUpdate.IsZero() && now.After(rl.NextUpdate) {
		return fmt.Errorf("expired at %s: %w", rl.NextUpdate.UTC().Format(time.RFC3339), ErrCRL)
	}
	key := string(iss.RawSubject)
	set := s.revoked[key]
	if set == nil {
		set = map[string]struct{}{}
		s.revoked[key] = set
	}
	for _, e := range rl.RevokedCertificateEntries {
		set[e.SerialNumber.Text(16)] = struct{}{}
	}
	if nu, ok := s.nextUpdate[key]; !rl.NextUpdate.IsZero() && (!ok || rl.NextUpdate.Before(nu)) {
		s.nextUpdate[key] = rl.NextUpdate
	}
	return nil
}

func crlIssuer(rl *x509.RevocationList, issuers []*x509.Certificate) *x509.Certificate {
	for _, c := range issuers {
		if bytes.Equal(c.RawSubject, rl.RawIssuer) && rl.CheckSignatureFrom(c) == nil {
			return c
		}
	}
	return nil
}

// check rejects a revoked certificate of the chain (leaf first) and, unless
// allowExpired, a CRL of an issuer in the chain that is stale at time at.
// It returns the earliest NextUpdate that applied (zero if none).
func (s *crlSet) check(chain []*x509.Certificate, at time.Time, allowExpired bool) (time.Time, error) {
	var until time.Time
	for _, c := range chain {
		set, ok := s.revoked[string(c.RawIssuer)] // string(bytes) as a map key does not allocate
		if !ok {
			continue
		}
		if _, revoked := set[c.SerialNumber.Text(16)]; revoked {
			return until, fmt.Errorf("crypto: serial %s of %q: %w", c.SerialNumber, c.Subject.CommonName, ErrRevoked)
		}
		nu, ok := s.nextUpdate[string(c.RawIssuer)]
		if !ok || allowExpired {
			continue
		}
		if at.After(nu) {
			return until, fmt.Errorf("crypto: CRL of %q expired at %s: %w", c.Issuer.CommonName, nu.UTC().Format(time.RFC3339), ErrCRL)
		}
		if until.IsZero() || nu.Before(until) {
			until = nu
		}
	}
	return until, nil
}

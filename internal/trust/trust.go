package trust

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/wssgw/wssgw/internal/crypto"
)

// Purpose is what a certificate's key is going to be used for.
type Purpose int

// Purposes: Signing needs KeyUsage digitalSignature, Encryption needs
// keyEncipherment (or keyAgreement for EC keys), when the extension is present.
const (
	PurposeSigning Purpose = iota + 1
	PurposeEncryption
)

// Options configures a Store. Hex fingerprints may contain colons
// and any case.
type Options struct {
	CAFiles           []string // trusted roots (only these; never the system roots)
	IntermediateFiles []string // untrusted intermediates offered to chain building
	PinnedCertFiles   []string // certificates trusted directly, also indexed for lookup
	PinnedSHA256      []string // SHA-256 of a certificate's DER or of its SPKI
	KnownCertFiles    []string // partner certificates indexed for lookup (not trusted by themselves)
	CRLFiles          []string
	AllowExpiredCRL   bool
	// SkipPinnedValidity trusts a pinned certificate outside its validity period.
	SkipPinnedValidity bool
	SubjectPattern     string             // regexp matched against the RFC 4514 subject DN
	SANPatterns        []string           // regexps; one must match a DNS, e-mail, URI or IP SAN
	ExtKeyUsages       []x509.ExtKeyUsage // one is required when set; any otherwise
	MinRSABits         int
	CacheSize          int              // default 10000
	CacheTTL           time.Duration    // default 5 minutes
	Clock              func() time.Time // for CRL load and cache TTL; default time.Now
	// OCSP, when set, is asked (from its cache, never the network) about
	// every verified leaf; it learns the pinned and known certificates at
	// load and every verified leaf (trust_ocsp.go).
	OCSP *OCSPChecker
}

// Files lists the files the options read (for the reloader).
func (o Options) Files() []string {
	var fs []string
	for _, l := range [][]string{o.CAFiles, o.IntermediateFiles, o.PinnedCertFiles, o.KnownCertFiles, o.CRLFiles} {
		fs = append(fs, l...)
	}
	return fs
}

// Identity is a trusted certificate and the facts the gateway reports.
type Identity struct {
	Subject      string // RFC 4514
	Issuer       string // RFC 4514
	SerialNumber string // decimal
	SHA1         string // hex of SHA-1 of the DER certificate
	SHA256       string // hex of SHA-256 of the DER certificate
	NotAfter     time.Time
	Pinned       bool
	Certificate  *x509.Certificate
}

// Store decides whether a certificate is trusted. It is immutable after
// NewStore except for its bounded verification cache; a reload builds a
// new store (and so a new, empty cache).
type Store struct {
	opts     Options
	roots    *x509.CertPool
	inter    []*x509.Certificate
	pins     map[[32]byte]bool
	subject  *regexp.Regexp
	sans     []*regexp.Regexp
	crls     *crlSet
	index    *Index
	cache    *verifyCache
	hasRoots bool
	loaded   []*x509.Certificate // every certificate read from the files, for expiry metrics
}

// NewStore loads and checks everything the options name.
func NewStore(o Options) (*Store, error) {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	s := &Store{opts: o, roots: x509.NewCertPool(), pins: map[[32]byte]bool{}}
	if err := s.loadCerts(); err != nil {
		return nil, err
	}
	if err := s.compilePatterns(); err != nil {
		return nil, err
	}
	s.cache = newVerifyCache(o.CacheSize, o.CacheTTL, o.Clock)
	s.watchKnownOCSP()
	return s, nil
}

func (s *Store) loadCerts() error {
	o := s.opts
	roots, err := crypto.LoadCertificates(o.CAFiles...)
	if err != nil {
		return err
	}
	for _, c := range roots {
		s.roots.AddCert(c)
	}
	s.hasRoots = len(roots) > 0
	if s.inter, err = crypto.LoadCertificates(o.IntermediateFiles...); err != nil {
		return err
	}
	pinned, err := crypto.LoadCertificates(o.PinnedCertFiles...)
	if err != nil {
		return err
	}
	for _, c := range pinned {
		s.pins[sha256.Sum256(c.Raw)] = true
	}
	for _, h := range o.PinnedSHA256 {
		b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(h), ":", ""))
		if err != nil || len(b) != sha256.Size {
			return fmt.Errorf("crypto: pinned SHA-256 %q: %w", h, crypto.ErrLoad)
		}
		s.pins[[32]byte(b)] = true
	}
	known, err := crypto.LoadCertificates(o.KnownCertFiles...)
	if err != nil {
		return err
	}
	s.index = NewIndex(append(pinned, known...))
	s.loaded = append(append(append(append([]*x509.Certificate{}, roots...), s.inter...), pinned...), known...)
	s.crls, err = loadCRLs(o.CRLFiles, append(roots, s.inter...), o.Clock(), o.AllowExpiredCRL)
	return err
}

func (s *Store) compilePatterns() error {
	var err error
	if p := s.opts.SubjectPattern; p != "" {
		if s.subject, err = regexp.Compile(p); err != nil {
			return fmt.Errorf("crypto: subject pattern: %v: %w", err, crypto.ErrLoad)
		}
	}
	for _, p := range s.opts.SANPatterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return fmt.Errorf("crypto: SAN pattern: %v: %w", err, crypto.ErrLoad)
		}
		s.sans = append(s.sans, re)
	}
	return nil
}

// Certificates returns every certificate the store loaded from its files
// (anchors, intermediates, pins, known partners).
func (s *Store) Certificates() []*x509.Certificate { return s.loaded }

// Index returns the lookup index of the pinned and known certificates.
func (s *Store) Index() *Index { return s.index }

// Verify decides whether leaf is trusted at time at for purpose. The
// intermediates (typically from the message) are only chain-building hints.
// Decisions are cached per certificate; a cached positive decision is reused
// only while at lies inside the chain's validity (and CRL freshness) window.
func (s *Store) Verify(leaf *x509.Certificate, intermediates []*x509.Certificate, at time.Time, p Purpose) (*Identity, error) {
	if leaf == nil {
		return nil, fmt.Errorf("crypto: no certificate: %w", ErrUntrusted)
	}
	if p != PurposeSigning && p != PurposeEncryption {
		return nil, fmt.Errorf("crypto: unknown key purpose %d: %w", p, ErrKeyUsage)
	}
	id, err, ok := s.cache.get(leaf, intermediates, p, at)
	if !ok {
		var win window
		id, win, err = s.verify(leaf, intermediates, at, p)
		s.cache.put(leaf, intermediates, p, id, win, err)
	}
	if err == nil {
		err = s.checkOCSP(leaf) // after the cache: a status change applies at once
	}
	if err != nil {
		return nil, err
	}
	return id, nil
}

// window is the time range in which a positive decision stays valid.
type window struct{ from, until time.Time }

func (s *Store) verify(leaf *x509.Certificate, inter []*x509.Certificate, at time.Time, p Purpose) (*Identity, window, error) {
	if err := s.checkLeaf(leaf, p); err != nil {
		return nil, window{}, err
	}
	chain, pinned, err := s.chain(leaf, inter, at)
	if err != nil {
		return nil, window{}, err
	}
	s.watchOCSP(chain)
	win := validity(chain)
	if !pinned {
		chain = chain[:len(chain)-1] // the root is not checked against CRLs
	}
	until, err := s.crls.check(chain, at, s.opts.AllowExpiredCRL)
	if err != nil {
		return nil, window{}, err
	}
	if !until.IsZero() && until.Before(win.until) {
		win.until = until
	}
	return newIdentity(leaf, pinned), win, nil
}

// checkLeaf does the checks that do not depend on time or chain.
func (s *Store) checkLeaf(leaf *x509.Certificate, p Purpose) error {
	if err := crypto.CheckPublicKey(leaf.PublicKey, s.opts.MinRSABits); err != nil {
		return err
	}
	if err := checkKeyUsage(leaf, p); err != nil {
		return err
	}
	return s.checkNames(leaf)
}

// chain returns the verified chain (leaf first), or just the leaf if pinned.
func (s *Store) chain(leaf *x509.Certificate, inter []*x509.Certificate, at time.Time) ([]*x509.Certificate, bool, error) {
	if s.pins[sha256.Sum256(leaf.Raw)] || s.pins[sha256.Sum256(leaf.RawSubjectPublicKeyInfo)] {
		if !s.opts.SkipPinnedValidity {
			if err := checkValidity(leaf, at); err != nil {
				return nil, true, err
			}
		}
		return []*x509.Certificate{leaf}, true, nil
	}
	if !s.hasRoots {
		return nil, false, fmt.Errorf("crypto: %q: no CA configured and not pinned: %w", leaf.Subject.CommonName, ErrUntrusted)
	}
	pool := x509.NewCertPool()
	for _, c := range s.inter {
		pool.AddCert(c)
	}
	for _, c := range inter {
		pool.AddCert(c)
	}
	eku := s.opts.ExtKeyUsages
	if len(eku) == 0 {
		eku = []x509.ExtKeyUsage{x509.ExtKeyUsageAny}
	}
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: s.roots, Intermediates: pool, CurrentTime: at, KeyUsages: eku})
	if err != nil {
		return nil, false, mapVerifyError(leaf, err, at)
	}
	return chains[0], false, nil
}

func mapVerifyError(leaf *x509.Certificate, err error, at time.Time) error {
	var ce x509.CertificateInvalidError
	if errors.As(err, &ce) {
		switch ce.Reason {
		case x509.Expired:
			if ce.Cert != nil && ce.Cert.NotBefore.After(at) {
				return fmt.Errorf("crypto: %q: %v: %w", leaf.Subject.CommonName, err, ErrNotYetValid)
			}
			return fmt.Errorf("crypto: %q: %v: %w", leaf.Subject.CommonName, err, ErrExpired)
		case x509.IncompatibleUsage:
			return fmt.Errorf("crypto: %q: %v: %w", leaf.Subject.CommonName, err, ErrKeyUsage)
		}
	}
	return fmt.Errorf("crypto: %q: %v: %w", leaf.Subject.CommonName, err, ErrUntrusted)
}

func checkValidity(c *x509.Certificate, at time.Time) error {
	if at.Before(c.NotBefore) {
		return fmt.Errorf("crypto: %q valid from %s: %w", c.Subject.CommonName, c.NotBefore.UTC().Format(time.RFC3339), ErrNotYetValid)
	}
	if at.After(c.NotAfter) {
		return fmt.Errorf("crypto: %q expired at %s: %w", c.Subject.CommonName, c.NotAfter.UTC().Format(time.RFC3339), ErrExpired)
	}
	return nil
}

func validity(chain []*x509.Certificate) window {
	w := window{from: chain[0].NotBefore, until: chain[0].NotAfter}
	for _, c := range chain[1:] {
		if c.NotBefore.After(w.from) {
			w.from = c.NotBefore
		}
		if c.NotAfter.Before(w.until) {
			w.until = c.NotAfter
		}
	}
	return w
}

func checkKeyUsage(c *x509.Certificate, p Purpose) error {
	if c.KeyUsage == 0 { // extension absent
		return nil
	}
	var ok bool
	switch p {
	case PurposeSigning:
		ok = c.KeyUsage&x509.KeyUsageDigitalSignature != 0
	case PurposeEncryption:
		ok = c.KeyUsage&x509.KeyUsageKeyEncipherment != 0 ||
			(c.PublicKeyAlgorithm == x509.ECDSA && c.KeyUsage&x509.KeyUsageKeyAgreement != 0)
	}
	if !ok {
		return fmt.Errorf("crypto: %q key usage %#x for purpose %d: %w", c.Subject.CommonName, c.KeyUsage, p, ErrKeyUsage)
	}
	return nil
}

func (s *Store) checkNames(c *x509.Certificate) error {
	if s.subject != nil {
		dn, err := DNFromRaw(c.RawSubject)
		if err != nil || !s.subject.MatchString(dn.String()) {
			return fmt.Errorf("crypto: subject %q does not match the configured pattern: %w", dn.String(), ErrSubject)
		}
	}
	if len(s.sans) == 0 {
		return nil
	}
	for _, san := range sanStrings(c) {
		for _, re := range s.sans {
			if re.MatchString(san) {
				return nil
			}
		}
	}
	return fmt.Errorf("crypto: no SAN of %q matches the configured patterns: %w", c.Subject.CommonName, ErrSubject)
}

func sanStrings(c *x509.Certificate) []string {
	out := append([]string{}, c.DNSNames...)
	out = append(out, c.EmailAddresses...)
	for _, u := range c.URIs {
		out = append(out, u.String())
	}
	for _, ip := range c.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

func newIdentity(c *x509.Certificate, pinned bool) *Identity {
	s1 := sha1.Sum(c.Raw)
	s256 := sha256.Sum256(c.Raw)
	return &Identity{
		Subject:      dnString(c.RawSubject),
		Issuer:       dnString(c.RawIssuer),
		SerialNumber: c.SerialNumber.String(),
		SHA1:         hex.EncodeToString(s1[:]),
		SHA256:       hex.EncodeToString(s256[:]),
		NotAfter:     c.NotAfter,
		Pinned:       pinned,
		Certificate:  c,
	}
}

func dnString(raw []byte) string {
	dn, err := DNFromRaw(raw)
	if err != nil {
		return ""
	}
	return dn.String()
}

package wss

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/trust"
)

// ReplayStore records message keys for a bounded time (see internal/replay).
type ReplayStore interface {
	Seen(ctx context.Context, key []byte, expires time.Time) (replayed bool, err error)
}

// replayResets is a ReplayStore that can lose what it recorded
// (replay.Reset): LastReset returns when it last did, and whether under
// running gateways; a zero time if never.
type replayResets interface {
	LastReset() (at time.Time, live bool)
}

// Policy is a config.Policy compiled for the engines: algorithm allow-list
// as a set, trust and decryption keys behind reloaders (secret rotation),
// credentials loaded.
type Policy struct {
	Name   string
	Config config.Policy
	// Signed and Encrypted are the required parts.
	Signed, Encrypted []xml.Name
	algorithms        *crypto.AllowList // each URI bound to its class
	c14n              map[string]bool
	trust             *reload.Reloader[trust.Store]
	ocsp              *trust.OCSPChecker // nil unless trust.ocsp.enabled; outlives trust reloads
	runOCSP           bool               // Run runs ocsp (Compile made it)
	keys              []*reload.Reloader[crypto.KeyPair]
	// decryptionKeys is the last slice DecryptionKeys returned, reused
	// while every reloader still holds the same key pair.
	decryptionKeys atomic.Pointer[[]*crypto.KeyPair]
	users          *reload.Reloader[Credentials] // nil without a credentials file
	replay         ReplayStore
	resets         replayResets // replay, when it can lose keys; nil otherwise
	unsignedRule   unsignedRule // unsignedHeaders and unsignedAllow (unsigned.go)
}

// Names of the required parts other than header blocks. They live in a
// private namespace so they never collide with a real header QName.
const partSpace = "urn:wssgw:part"

var (
	PartBody      = xml.Name{Space: partSpace, Local: config.PartBody}
	PartTimestamp = xml.Name{Space: partSpace, Local: config.PartTimestamp}
	PartUsername  = xml.Name{Space: partSpace, Local: config.PartUsernameToken}
	PartToken     = xml.Name{Space: partSpace, Local: config.PartToken}
)

// Compile builds the runtime policy. store may be nil when replay is off.
func Compile(name string, p config.Policy, store ReplayStore, ro reload.Options) (*Policy, error) {
	return CompileWith(name, p, store, ro, nil)
}

// CompileWith is Compile with the OCSP checker to use when the policy
// checks OCSP: a configuration reload passes the previous policy's, so
// that its cache of responses survives (with onUnknown: reject, a cold
// cache would refuse partners until the first fetches). A checker given
// here is run by the caller, not by Run; nil makes a new one that Run
// runs.
func CompileWith(name string, p config.Policy, store ReplayStore, ro reload.Options, ocsp *trust.OCSPChecker) (*Policy, error) {
	algs, err := allowList(p.Algorithms)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	cp := &Policy{Name: name, Config: p, algorithms: algs, c14n: c14nSet(p.Algorithms.Legacy)}
	cp.Signed = parts(p.RequiredSignedParts())
	cp.Encrypted = parts(p.EncryptedParts)
	cp.unsignedRule = compileUnsigned(p)
	if p.Replay != "off" {
		cp.replay = store
		cp.resets, _ = store.(replayResets)
	}
	t := p.Trust
	if len(t.CAFiles)+len(t.PinnedCertFiles)+len(t.PinnedSHA256)+len(t.KnownCertFiles) > 0 {
		opts := t.TrustOptions()
		if t.OCSP.Enabled {
			cp.ocsp, cp.runOCSP = ocsp, ocsp == nil
			if cp.ocsp == nil {
				o := t.OCSP.Options()
				o.Logger = ro.Logger
				cp.ocsp = trust.NewOCSPChecker(o)
			}
			opts.OCSP = cp.ocsp
		}
		r, err := reload.NewTrustSource("policies."+name+".trust", opts, ro)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", name, err)
		}
		cp.trust = r
	}
	for i, k := range p.DecryptionKeys {
		r, err := reload.NewKeySource(fmt.Sprintf("policies.%s.decryptionKeys[%d]", name, i), k.Options(), ro)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", name, err)
		}
		cp.keys = append(cp.keys, r)
	}
	if f := p.UsernameToken.CredentialsFile; f != "" {
		// Polled like the key material, so that a password added to the
		// Secret is usable without a restart (issue 16).
		u, err := reload.New("policies."+name+".usernameToken.credentialsFile", []string{f},
			func() (*Credentials, error) { return LoadCredentials(f) }, ro)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", name, err)
		}
		cp.users = u
	}
	return cp, nil
}

// Run keeps the policy's key material fresh until ctx ends.
func (p *Policy) Run(ctx context.Context) {
	if p.trust != nil {
		go p.trust.Run(ctx)
	}
	if p.ocsp != nil && p.runOCSP {
		go p.ocsp.Run(ctx)
	}
	for _, k := range p.keys {
		go k.Run(ctx)
	}
	if p.users != nil {
		go p.users.Run(ctx)
	}
}

// Refresh checks the policy's files now instead of at the next poll: a
// configuration reload that keeps this compiled policy (its configuration
// is unchanged) still takes up rotated files at once. A file that fails to
// load keeps its previous material, as a poll would; the errors are
// returned joined.
func (p *Policy) Refresh() error {
	var errs []error
	check := func(_ bool, err error) { errs = append(errs, err) }
	if p.trust != nil {
		check(p.trust.Check())
	}
	for _, k := range p.keys {
		check(k.Check())
	}
	if p.users != nil {
		check(p.users.Check())
	}
	return errors.Join(errs...)
}

func parts(names []string) []xml.Name {
	out := make([]xml.Name, 0, len(names))
	for _, n := range names {
		if space, local, ok := config.ParseQName(n); ok {
			out = append(out, xml.Name{Space: space, Local: local})
			continue
		}
		out = append(out, xml.Name{Space: partSpace, Local: n})
	}
	return out
}

// allowList is the policy's algorithm allow-list: the configured URIs or
// the modern default, plus the legacy families opted in. crypto.AllowList
// binds each URI to its class, so a digest URI is never accepted as a
// signature method, nor a key wrap as a data cipher.
func allowList(a config.Algorithms) (*crypto.AllowList, error) {
	list := a.Allow
	if len(list) == 0 {
		list = crypto.DefaultAllowed()
	}
	list = append([]string{}, list...)
	l := a.Legacy
	if l.SHA1 {
		list = append(list, crypto.AlgDigestSHA1, crypto.AlgRSASHA1, crypto.AlgECDSASHA1, crypto.AlgHMACSHA1)
	}
	if l.CBC {
		list = append(list, crypto.AlgAES128CBC, crypto.AlgAES192CBC, crypto.AlgAES256CBC)
	}
	if l.RSA15 {
		list = append(list, crypto.AlgRSA15)
	}
	return crypto.NewAllowList(list...)
}

// c14nSet is the canonicalizations allowed: exclusive c14n always, the
// inclusive ones by legacy opt-in (BSP R5404).
func c14nSet(l config.Legacy) map[string]bool {
	set := map[string]bool{c14n.AlgExcC14N: true}
	if l.InclusiveC14N {
		set[c14n.AlgC14N10] = true
		set[c14n.AlgC14N11] = true
	}
	return set
}

// kindClass maps the engines' algorithm kinds to crypto's classes.
var kindClass = map[string]crypto.AlgorithmClass{
	UseSignature:    crypto.ClassSignature,
	UseDigest:       crypto.ClassDigest,
	UseKeyTransport: crypto.ClassKeyTransport,
	UseData:         crypto.ClassBlockCipher,
}

// Allows reports whether uri is on the policy's allow-list as an algorithm
// of the given kind (UseSignature, UseDigest, UseC14N, UseKeyTransport,
// UseData). Engines call it before any key is used (DESIGN.md §5.2).
func (p *Policy) Allows(kind, uri string) bool {
	if kind == UseC14N {
		return p.c14n[uri]
	}
	c, ok := kindClass[kind]
	return ok && p.algorithms.Allowed(c, uri)
}

// Trust returns the current trust store, or nil when none is configured.
func (p *Policy) Trust() *trust.Store {
	if p.trust == nil {
		return nil
	}
	return p.trust.Current()
}

// OCSP returns the policy's OCSP checker, or nil when OCSP is off.
func (p *Policy) OCSP() *trust.OCSPChecker { return p.ocsp }

// DecryptionKeys returns the current decryption key pairs; the caller must
// not modify the slice. It is asked once per DOM EncryptedKey and per
// template decrypt hit, so the slice is built again only after a reloader
// swapped its key pair (secret rotation), not per call (issue 14): the
// check is one pointer compare per key.
func (p *Policy) DecryptionKeys() []*crypto.KeyPair {
	if c := p.decryptionKeys.Load(); c != nil && p.keysCurrent(*c) {
		return *c
	}
	out := make([]*crypto.KeyPair, 0, len(p.keys))
	for _, k := range p.keys {
		out = append(out, k.Current())
	}
	p.decryptionKeys.Store(&out)
	return out
}

// keysCurrent reports whether keys are the reloaders' current key pairs.
func (p *Policy) keysCurrent(keys []*crypto.KeyPair) bool {
	if len(keys) != len(p.keys) {
		return false
	}
	for i, k := range p.keys {
		if keys[i] != k.Current() {
			return false
		}
	}
	return true
}

// Users returns the current UsernameToken credentials, or nil.
func (p *Policy) Users() *Credentials {
	if p.users == nil {
		return nil
	}
	return p.users.Current()
}

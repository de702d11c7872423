package wss

import (
	"context"
	"crypto/x509"
	"encoding/xml"
	"fmt"
	"time"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
)

// ReplayStore records message keys for a bounded time (see internal/replay).
type ReplayStore interface {
	Seen(ctx context.Context, key []byte, expires time.Time) (replayed bool, err error)
}

// Policy is a config.Policy compiled for the engines: algorithm allow-list
// as a set, trust and decryption keys behind reloaders (secret rotation),
// credentials loaded.
type Policy struct {
	Name   string
	Config config.Policy
	// Signed and Encrypted are the required parts.
	Signed, Encrypted []xml.Name
	allowed           map[string]bool
	trust             *crypto.Reloader[crypto.TrustStore]
	keys              []*crypto.Reloader[crypto.KeyPair]
	users             *Credentials
	replay            ReplayStore
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
func Compile(name string, p config.Policy, store ReplayStore, ro crypto.ReloadOptions) (*Policy, error) {
	cp := &Policy{Name: name, Config: p, allowed: allowSet(p.Algorithms)}
	cp.Signed = parts(p.RequiredSignedParts())
	cp.Encrypted = parts(p.EncryptedParts)
	if p.Replay != "off" {
		cp.replay = store
	}
	t := p.Trust
	if len(t.CAFiles)+len(t.PinnedCertFiles)+len(t.PinnedSHA256)+len(t.KnownCertFiles) > 0 {
		r, err := crypto.NewTrustSource("policies."+name+".trust", t.TrustOptions(), ro)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", name, err)
		}
		cp.trust = r
	}
	for i, k := range p.DecryptionKeys {
		r, err := crypto.NewKeySource(fmt.Sprintf("policies.%s.decryptionKeys[%d]", name, i), k.Options(), ro)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", name, err)
		}
		cp.keys = append(cp.keys, r)
	}
	if f := p.UsernameToken.CredentialsFile; f != "" {
		u, err := LoadCredentials(f)
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
	for _, k := range p.keys {
		go k.Run(ctx)
	}
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

func allowSet(a config.Algorithms) map[string]bool {
	set := map[string]bool{c14n.AlgExcC14N: true}
	list := a.Allow
	if len(list) == 0 {
		list = crypto.DefaultAllowed()
	}
	for _, uri := range list {
		set[uri] = true
	}
	l := a.Legacy
	if l.SHA1 {
		for _, uri := range []string{crypto.AlgDigestSHA1, crypto.AlgRSASHA1, crypto.AlgECDSASHA1, crypto.AlgHMACSHA1} {
			set[uri] = true
		}
	}
	if l.CBC {
		for _, uri := range []string{crypto.AlgAES128CBC, crypto.AlgAES192CBC, crypto.AlgAES256CBC} {
			set[uri] = true
		}
	}
	if l.RSA15 {
		set[crypto.AlgRSA15] = true
	}
	if l.InclusiveC14N {
		set[c14n.AlgC14N10] = true
		set[c14n.AlgC14N11] = true
	}
	return set
}

// Allows reports whether the algorithm URI is on the policy's allow-list.
// Engines call it before any key is used (DESIGN.md §5.2).
func (p *Policy) Allows(uri string) bool { return p.allowed[uri] }

// Trust returns the current trust store, or nil when none is configured.
func (p *Policy) Trust() *crypto.TrustStore {
	if p.trust == nil {
		return nil
	}
	return p.trust.Current()
}

// DecryptionKeys returns the current decryption key pairs.
func (p *Policy) DecryptionKeys() []*crypto.KeyPair {
	out := make([]*crypto.KeyPair, 0, len(p.keys))
	for _, k := range p.keys {
		out = append(out, k.Current())
	}
	return out
}

// DecryptionKeyFor returns the decryption key whose certificate is c.
func (p *Policy) DecryptionKeyFor(c *x509.Certificate) *crypto.KeyPair {
	for _, k := range p.DecryptionKeys() {
		if k.Certificate.Equal(c) {
			return k
		}
	}
	return nil
}

// Users returns the UsernameToken credentials, or nil.
func (p *Policy) Users() *Credentials { return p.users }

package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/trust"
)

func (c *Config) validatePolicies(ps *Problems) {
	names := make([]string, 0, len(c.Policies))
	for name := range c.Policies {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		key := "policies." + name
		if name == PolicyNone {
			ps.add(key, "%q is reserved for routes without a policy", PolicyNone)
		}
		if !routeName.MatchString(name) {
			ps.add(key, "policy names must be 1-64 characters of a-z, 0-9, '-' and '_', got %q", name)
		}
		c.Policies[name].validate(ps, key)
	}
}

// TrustOptions converts the trust section for internal/trust.
func (t Trust) TrustOptions() trust.Options {
	return trust.Options{
		CAFiles:           t.CAFiles,
		IntermediateFiles: t.IntermediateFiles,
		PinnedCertFiles:   t.PinnedCertFiles,
		PinnedSHA256:      t.PinnedSHA256,
		KnownCertFiles:    t.KnownCertFiles,
		CRLFiles:          t.CRLFiles,
		SubjectPattern:    t.SubjectPattern,
		SANPatterns:       t.SANPatterns,
		MinRSABits:        t.MinRSABits,
	}
}

// Options converts the key files for the crypto package.
func (k KeyFiles) Options() crypto.KeyFileOptions {
	return crypto.KeyFileOptions{CertFile: k.CertFile, KeyFile: k.KeyFile, PKCS12File: k.PKCS12File, PasswordFile: k.PasswordFile}
}

func (p Policy) validate(ps *Problems, key string) {
	for i, r := range p.Require {
		checkOneOf(ps, fmt.Sprintf("%s.require[%d]", key, i), r,
			RequireSignature, RequireEncryption, RequireTimestamp, RequireUsernameToken)
	}
	for i, part := range p.SignedParts {
		checkPart(ps, fmt.Sprintf("%s.signedParts[%d]", key, i), part, PartBody, PartTimestamp, PartUsernameToken, PartToken)
	}
	for i, part := range p.EncryptedParts {
		checkPart(ps, fmt.Sprintf("%s.encryptedParts[%d]", key, i), part, PartBody)
	}
	if len(p.SignedParts) > 0 && !p.Has(RequireSignature) {
		ps.add(key+".signedParts", "needs %q in require", RequireSignature)
	}
	if len(p.EncryptedParts) > 0 && !p.Has(RequireEncryption) {
		ps.add(key+".encryptedParts", "needs %q in require", RequireEncryption)
	}
	p.validateTrust(ps, key+".trust")
	if p.Has(RequireEncryption) && len(p.DecryptionKeys) == 0 {
		ps.add(key+".decryptionKeys", "at least one key pair is required when encryption is required")
	}
	for i, k := range p.DecryptionKeys {
		if _, err := crypto.LoadKeyPair(k.Options()); err != nil {
			ps.add(fmt.Sprintf("%s.decryptionKeys[%d]", key, i), "%v", err)
		}
	}
	p.Algorithms.validate(ps, key+".algorithms")
	checkPositive(ps, key+".timestamp.maxAge", p.Timestamp.MaxAge)
	checkNonNegative(ps, key+".timestamp.futureSkew", p.Timestamp.FutureSkew)
	checkPositive(ps, key+".usernameToken.maxAge", p.UsernameToken.MaxAge)
	if p.Has(RequireUsernameToken) && p.UsernameToken.CredentialsFile == "" {
		ps.add(key+".usernameToken.credentialsFile", "is required when usernameToken is required")
	}
	if f := p.UsernameToken.CredentialsFile; f != "" {
		if _, err := os.Stat(f); err != nil {
			ps.add(key+".usernameToken.credentialsFile", "cannot read: %v", err)
		}
	}
	checkOneOf(ps, key+".replay", p.Replay, "on", "off")
	p.validateUnsigned(ps, key)
	p.Responses.validate(ps, key+".responses", p)
}

func (p Policy) validateTrust(ps *Problems, key string) {
	t := p.Trust
	t.OCSP.validate(ps, key+".ocsp", t)
	anchored := len(t.CAFiles)+len(t.PinnedCertFiles)+len(t.PinnedSHA256) > 0
	if p.Has(RequireSignature) && !anchored {
		// Certificates in messages are hints only (DESIGN.md §5.5); with no
		// anchor no signer could ever be trusted.
		ps.add(key+".caFiles", "a CA file or a pin is required when signature is required")
	}
	if !anchored && len(t.KnownCertFiles)+len(t.CRLFiles)+len(t.IntermediateFiles) == 0 {
		return
	}
	// A file that cannot be read is named by its list element; the store
	// is only built (and its own error reported) when every file reads.
	unreadable := false
	for _, list := range []struct {
		name  string
		files []string
	}{
		{"caFiles", t.CAFiles}, {"intermediateFiles", t.IntermediateFiles}, {"pinnedCertFiles", t.PinnedCertFiles},
		{"knownCertFiles", t.KnownCertFiles}, {"crlFiles", t.CRLFiles},
	} {
		for i, f := range list.files {
			if _, err := os.Stat(f); err != nil {
				ps.add(fmt.Sprintf("%s.%s[%d]", key, list.name, i), "cannot read %q: %v", f, errors.Unwrap(err))
				unreadable = true
			}
		}
	}
	if unreadable {
		return
	}
	if _, err := trust.NewStore(t.TrustOptions()); err != nil {
		ps.add(key, "%v", err)
	}
}

// validateUnsigned checks unsignedHeaders and unsignedAllow.
func (p Policy) validateUnsigned(ps *Problems, key string) {
	checkOneOf(ps, key+".unsignedHeaders", p.UnsignedHeaders, UnsignedStrip, UnsignedReject, UnsignedForward)
	for i, q := range p.UnsignedAllow {
		if _, _, ok := ParseQName(q); !ok {
			ps.add(fmt.Sprintf("%s.unsignedAllow[%d]", key, i), "must be a QName {namespace}local, got %q", q)
		}
	}
}

// checkPart accepts a named part or a header block "{namespace}local".
func checkPart(ps *Problems, key, part string, named ...string) {
	for _, n := range named {
		if part == n {
			return
		}
	}
	if _, _, ok := ParseQName(part); !ok {
		ps.add(key, "must be one of %s or a header QName {namespace}local, got %q", strings.Join(named, ", "), part)
	}
}

// ParseQName splits "{namespace}local".
func ParseQName(s string) (space, local string, ok bool) {
	if !strings.HasPrefix(s, "{") {
		return "", "", false
	}
	end := strings.IndexByte(s, '}')
	if end < 2 || end == len(s)-1 || strings.ContainsAny(s[end+1:], "{}: ") {
		return "", "", false
	}
	return s[1:end], s[end+1:], true
}

// headerName is an HTTP field name (RFC 9110 §5.1 token), kept to the
// conventional letters, digits and hyphens.
var headerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,63}$`)

func (r Replay) validate(ps *Problems, key string) {
	checkOneOf(ps, key+".store", r.Store, "memory", "redis")
	if r.MaxEntries <= 0 {
		ps.add(key+".maxEntries", "must be positive, got %d", r.MaxEntries)
	}
	if r.Store != "redis" {
		return
	}
	if r.Redis.Addr == "" {
		ps.add(key+".redis.addr", "is required when store is redis")
	}
	checkPositive(ps, key+".redis.timeout", r.Redis.Timeout)
	if f := r.Redis.PasswordFile; f != "" {
		if _, err := os.ReadFile(f); err != nil {
			ps.add(key+".redis.passwordFile", "cannot read: %v", err)
		}
	}
	if r.Redis.CAFile != "" {
		checkCAFile(ps, key+".redis.caFile", r.Redis.CAFile)
	}
}

func (x XMLLimits) validate(ps *Problems, key string) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"maxDepth", int64(x.MaxDepth)}, {"maxAttrs", int64(x.MaxAttrs)},
		{"maxNameLen", int64(x.MaxNameLen)}, {"maxNSDecls", int64(x.MaxNSDecls)},
		{"maxElements", int64(x.MaxElements)}, {"maxTextBytes", int64(x.MaxTextBytes)},
		{"maxBase64Bytes", int64(x.MaxBase64Bytes)}, {"maxReferences", int64(x.MaxReferences)},
		{"maxTransforms", int64(x.MaxTransforms)}, {"maxSignatures", int64(x.MaxSignatures)},
		{"maxAttrValueBytes", int64(x.MaxAttrValueLen)},
		{"maxEncryptedKeys", int64(x.MaxEncryptedKeys)}, {"maxEncryptedData", int64(x.MaxEncryptedData)},
	} {
		if f.v <= 0 {
			ps.add(key+"."+f.name, "must be positive, got %d", f.v)
		}
	}
}

func (h IdentityHeaders) validate(ps *Problems, key string) {
	for _, f := range []struct{ name, v string }{{"subject", h.Subject}, {"thumbprint", h.Thumbprint}, {"username", h.Username}} {
		if f.v != "" && !headerName.MatchString(f.v) {
			ps.add(key+"."+f.name, "must be an HTTP header name such as X-WSS-Subject, got %q", f.v)
		}
	}
}

func (a Algorithms) validate(ps *Problems, key string) {
	for i, uri := range a.Allow {
		if c, ok := crypto.Classify(uri); !ok || c == crypto.ClassMGF {
			ps.add(fmt.Sprintf("%s.allow[%d]", key, i), "unknown algorithm URI %q", uri)
		}
	}
}

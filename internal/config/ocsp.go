package config

import (
	"bytes"
	"net/url"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/trust"
)

// Values of trust.ocsp.onUnknown and onStale.
const (
	OCSPReject = "reject"
	OCSPAccept = "accept"
)

// DefaultOCSP is off; when enabled it fails closed, like an expired CRL:
// a certificate whose status is not established is rejected.
func DefaultOCSP() OCSP {
	return OCSP{
		Refresh:   trust.DefaultOCSPRefresh,
		Timeout:   trust.DefaultOCSPTimeout,
		OnUnknown: OCSPReject,
		OnStale:   OCSPReject,
	}
}

func (o *OCSP) applyDefaults() {
	d := DefaultOCSP()
	setDefault(&o.Refresh, d.Refresh)
	setDefault(&o.Timeout, d.Timeout)
	setDefault(&o.OnUnknown, d.OnUnknown)
	setDefault(&o.OnStale, d.OnStale)
}

// Options converts the section for internal/trust (logging and the
// fetch counter are wired by the caller).
func (o OCSP) Options() trust.OCSPOptions {
	return trust.OCSPOptions{
		ResponderURL:  o.ResponderURL,
		Refresh:       o.Refresh,
		MaxStaleness:  o.MaxStaleness,
		Timeout:       o.Timeout,
		RejectUnknown: o.OnUnknown != OCSPAccept,
		RejectStale:   o.OnStale != OCSPAccept,
	}
}

// validate checks the section when enabled; t is the trust section it
// belongs to, key its path ("policies.<name>.trust.ocsp").
func (o OCSP) validate(ps *Problems, key string, t Trust) {
	if !o.Enabled {
		return
	}
	if len(t.CAFiles)+len(t.PinnedCertFiles)+len(t.PinnedSHA256)+len(t.KnownCertFiles) == 0 {
		ps.add(key+".enabled", "needs caFiles, pinnedCertFiles, pinnedSHA256 or knownCertFiles in the trust section: there is no certificate to check")
	}
	if o.ResponderURL != "" {
		u, err := url.Parse(o.ResponderURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			ps.add(key+".responderURL", "must be an http or https URL, got %q", o.ResponderURL)
		}
	}
	checkPositive(ps, key+".refresh", o.Refresh)
	checkPositive(ps, key+".timeout", o.Timeout)
	checkNonNegative(ps, key+".maxStaleness", o.MaxStaleness)
	if o.Timeout > 0 && o.Refresh > 0 && o.Timeout > o.Refresh {
		ps.add(key+".timeout", "must not exceed refresh (%s), got %s", o.Refresh, o.Timeout)
	}
	checkOneOf(ps, key+".onUnknown", o.OnUnknown, OCSPReject, OCSPAccept)
	checkOneOf(ps, key+".onStale", o.OnStale, OCSPReject, OCSPAccept)
	o.checkResponders(ps, key, t)
}

// checkResponders: with onUnknown: reject and no responderURL, a known or
// pinned partner certificate without an OCSP responder in its AIA could
// never be established, so its partner would be refused for good. (An
// unreadable file is the trust section's own problem.)
func (o OCSP) checkResponders(ps *Problems, key string, t Trust) {
	if o.ResponderURL != "" || o.OnUnknown == OCSPAccept {
		return
	}
	for _, f := range append(append([]string{}, t.KnownCertFiles...), t.PinnedCertFiles...) {
		certs, err := crypto.LoadCertificates(f)
		if err != nil {
			continue
		}
		for _, c := range certs {
			if len(c.OCSPServer) == 0 && !bytes.Equal(c.RawIssuer, c.RawSubject) {
				ps.add(key+".responderURL", "certificate %q in %s names no OCSP responder: set responderURL or onUnknown: accept", c.Subject.String(), f)
			}
		}
	}
}

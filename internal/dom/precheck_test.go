package dom

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/wss"
)

// verdict runs the whole security stage: engine, policy check.
func (h *hostileSet) verdict(t *testing.T, p *wss.Policy, msg []byte) wss.Reason {
	t.Helper()
	e, err := New(h.cfg)
	require.NoError(t, err)
	_, _, err = p.Verify(context.Background(), e, msg, time.Now())
	if err == nil {
		return 0
	}
	return reasonOf(err)
}

// TestPrecheckBeforeKeys: what needs no key is refused before any
// EncryptedKey is unwrapped. The EncryptedKeys here hold random bytes:
// unwrapping one fails with ReasonDecrypt, so that reason says a private
// key was used first (as it was before the pre-pass), any other says it
// was not.
func TestPrecheckBeforeKeys(t *testing.T) {
	h := newHostileSet(t)
	gcm := wcrypto.AlgAES256GCM
	encOnly := func(p *config.Policy) { p.Require = []string{config.RequireEncryption} }
	tests := map[string]struct {
		o      hostile
		policy func(*config.Policy)
		want   wss.Reason
	}{
		"fail/no-signature":               {o: hostile{keys: 1, garbage: true, cipher: gcm}, want: wss.ReasonMissing},
		"fail/no-signature-cbc":           {o: hostile{keys: 3, garbage: true}, want: wss.ReasonMissing},
		"fail/signature-not-over-body":    {o: hostile{keys: 1, garbage: true, cipher: gcm, sig: "last"}, want: wss.ReasonPolicy},
		"fail/cbc-after-the-key":          {o: hostile{keys: 1, garbage: true, sig: "last", bodyRef: true}, want: wss.ReasonAlgorithm},
		"fail/oaep-digest-of-a-later-key": {o: hostile{keys: 2, garbage: true, cipher: gcm, sig: "last", bodyRef: true, digest: "urn:md4"}, want: wss.ReasonAlgorithm},
		"fail/too-many-keys":              {o: hostile{keys: 5, garbage: true, cipher: gcm, sig: "last", bodyRef: true}, want: wss.ReasonMalformed},
		// The pre-pass passes what it cannot refuse without a key: then
		// header order decides, and the first key fails to unwrap.
		"fail/structure-ok-key-bad": {o: hostile{keys: 1, garbage: true, cipher: gcm, sig: "last", bodyRef: true}, want: wss.ReasonDecrypt},
		// A policy that needs no signature gets no signature check.
		"fail/encryption-only-policy": {o: hostile{keys: 1, garbage: true, cipher: gcm}, policy: encOnly, want: wss.ReasonDecrypt},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := h.policy
			if tc.policy != nil {
				p = h.compile(t, tc.policy)
			}
			got := h.verdict(t, p, h.message(t, tc.o))
			assert.Equal(t, tc.want.String(), got.String())
		})
	}
}

func (h *hostileSet) compile(t *testing.T, mutate func(*config.Policy)) *wss.Policy {
	t.Helper()
	cp := h.policy.Config
	mutate(&cp)
	p, err := wss.Compile("hostile", cp, nil, reload.Options{})
	require.NoError(t, err)
	return p
}

// signedEncrypted is a valid sign-then-encrypt message for the gateway:
// its Body EncryptedData's KeyInfo names the EncryptedKey by a
// SecurityTokenReference, as WSS4J writes it.
func (h *hostileSet) signedEncrypted(t *testing.T) []byte {
	t.Helper()
	env := []byte(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><m:Order xmlns:m="urn:m">42</m:Order></soap:Body></soap:Envelope>`)
	out, err := signer.Secure(env, signer.Options{Signer: h.gw.Key, Certificate: h.gw.Cert, KeyReference: signer.RefBST, Now: time.Now,
		EncryptFor: h.gw.Cert, EncryptKeyReference: signer.RefIssuerSerial})
	require.NoError(t, err)
	return out
}

var (
	edKeyInfoRE = regexp.MustCompile(`(<xenc:EncryptedData[^>]*>.*?<ds:KeyInfo[^>]*>)(.*?)(</ds:KeyInfo>)`)
	ekIDRE      = regexp.MustCompile(`<xenc:EncryptedKey [^>]*Id="([^"]+)"`)
	ekValueRE   = regexp.MustCompile(`<xenc:EncryptedKey .*?<xenc:CipherValue>([^<]+)<`)
	bstIDRE     = regexp.MustCompile(`<wsse:BinarySecurityToken [^>]*wsu:Id="([^"]+)"`)
)

// TestEncryptedDataKeyName: an EncryptedData decrypted through an
// EncryptedKey's ReferenceList is refused when its own KeyInfo names a key
// that is not there, an element that is not an EncryptedKey, or another
// EncryptedKey. Before, that KeyInfo was not read at all.
func TestEncryptedDataKeyName(t *testing.T) {
	h := newHostileSet(t)
	const wsse11 = `xmlns:wsse="` + nsWSSE + `"`
	str := func(inner string) string {
		return `<wsse:SecurityTokenReference ` + wsse11 + `>` + inner + `</wsse:SecurityTokenReference>`
	}
	sha1Of := func(t *testing.T, b64 string) string {
		raw, err := base64.StdEncoding.DecodeString(b64)
		require.NoError(t, err)
		sum := sha1.Sum(raw)
		return base64.StdEncoding.EncodeToString(sum[:])
	}
	keyID := func(v string) string {
		return str(`<wsse:KeyIdentifier ValueType="` + vtEncKeySHA1 + `" EncodingType="` + encBase64 + `">` + v + `</wsse:KeyIdentifier>`)
	}
	// other is a second EncryptedKey for the gateway, with a ReferenceList
	// of its own: a key that unwraps, but not the one the data is under.
	other := func(t *testing.T) (string, string) {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		ct, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, h.gw.Cert.PublicKey.(*rsa.PublicKey), key, nil)
		require.NoError(t, err)
		v := base64.StdEncoding.EncodeToString(ct)
		ski := base64.StdEncoding.EncodeToString(h.gw.Cert.SubjectKeyId)
		return `<xenc:EncryptedKey xmlns:xenc="` + nsXEnc + `" Id="EK-other"><xenc:EncryptionMethod Algorithm="` + wcrypto.AlgRSAOAEPMGF1P + `"/><ds:KeyInfo xmlns:ds="` + nsDS + `">` +
			str(`<wsse:KeyIdentifier ValueType="`+vtSKI+`" EncodingType="`+encBase64+`">`+ski+`</wsse:KeyIdentifier>`) +
			`</ds:KeyInfo><xenc:CipherData><xenc:CipherValue>` + v + `</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey>`, v
	}
	tests := map[string]struct {
		// keyInfo returns the EncryptedData's new KeyInfo content and any
		// EncryptedKey to put first in the Security header.
		keyInfo func(t *testing.T, msg string) (string, string)
		want    wss.Reason
	}{
		"ok/as-sent": {keyInfo: func(t *testing.T, msg string) (string, string) {
			return edKeyInfoRE.FindStringSubmatch(msg)[2], ""
		}},
		"ok/retrieval-method": {keyInfo: func(t *testing.T, msg string) (string, string) {
			return `<ds:RetrievalMethod Type="` + nsXEnc + `EncryptedKey" URI="#` + ekIDRE.FindStringSubmatch(msg)[1] + `"/>`, ""
		}},
		"ok/encrypted-key-sha1": {keyInfo: func(t *testing.T, msg string) (string, string) {
			return keyID(sha1Of(t, ekValueRE.FindStringSubmatch(msg)[1])), ""
		}},
		"ok/names-no-key": {keyInfo: func(t *testing.T, msg string) (string, string) {
			return `<ds:KeyName>gateway</ds:KeyName>`, ""
		}},
		"fail/missing-encrypted-key": {keyInfo: func(t *testing.T, msg string) (string, string) {
			return str(`<wsse:Reference URI="#EK-missing"/>`), ""
		}, want: wss.ReasonReference},
		"fail/retrieval-method-to-missing-key": {keyInfo: func(t *testing.T, msg string) (string, string) {
			return `<ds:RetrievalMethod Type="` + nsXEnc + `EncryptedKey" URI="#EK-missing"/>`, ""
		}, want: wss.ReasonReference},
		"fail/names-a-token": {keyInfo: func(t *testing.T, msg string) (string, string) {
			return str(`<wsse:Reference URI="#` + bstIDRE.FindStringSubmatch(msg)[1] + `"/>`), ""
		}, want: wss.ReasonReference},
		"fail/names-the-body": {keyInfo: func(t *testing.T, msg string) (string, string) {
			id := regexp.MustCompile(`<soap:Body [^>]*wsu:Id="([^"]+)"`).FindStringSubmatch(msg)[1]
			return `<ds:RetrievalMethod URI="#` + id + `"/>`, ""
		}, want: wss.ReasonReference},
		"fail/names-another-key": {keyInfo: func(t *testing.T, msg string) (string, string) {
			ek, _ := other(t)
			return str(`<wsse:Reference URI="#EK-other"/>`), ek
		}, want: wss.ReasonToken},
		"fail/sha1-of-another-key": {keyInfo: func(t *testing.T, msg string) (string, string) {
			ek, v := other(t)
			return keyID(sha1Of(t, v)), ek
		}, want: wss.ReasonToken},
		"fail/sha1-of-no-key": {keyInfo: func(t *testing.T, msg string) (string, string) {
			return keyID(base64.StdEncoding.EncodeToString(make([]byte, 20))), ""
		}, want: wss.ReasonToken},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			msg := string(h.signedEncrypted(t))
			ki, ek := tc.keyInfo(t, msg)
			m := edKeyInfoRE.FindStringSubmatchIndex(msg)
			require.NotNil(t, m)
			msg = msg[:m[4]] + ki + msg[m[5]:]
			if ek != "" {
				i := strings.Index(msg, "<xenc:EncryptedKey ")
				msg = msg[:i] + ek + msg[i:]
			}
			got := h.verdict(t, h.policy, []byte(msg))
			assert.Equal(t, tc.want.String(), got.String())
		})
	}
}

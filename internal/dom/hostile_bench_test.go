package dom

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// hostileSet is a policy requiring a signature, whose decryption key is
// the gateway's, and the gate configuration of the hostile benchmark.
type hostileSet struct {
	policy *wss.Policy
	gw     *testpki.Leaf
	cfg    xmlscan.Config
}

func newHostileSet(tb testing.TB) *hostileSet {
	tb.Helper()
	dir := tb.TempDir()
	ca := testpki.NewCA(tb, "hostile CA")
	gw := ca.IssueRSA(tb, dir, "gateway")
	cp := config.DefaultPolicy()
	cp.Replay = "off"
	cp.Trust.CAFiles = []string{ca.WriteCert(tb, dir)}
	cp.DecryptionKeys = []config.KeyFiles{{CertFile: gw.CertFile, KeyFile: gw.KeyFile}}
	p, err := wss.Compile("hostile", cp, nil, reload.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := xmlscan.DefaultConfig()
	// Room for a 10 MiB message of EncryptedKeys: an operator who raised
	// maxBodyBytes and maxElements, so that the gate's byte and element
	// limits are not what stops it.
	cfg.Limits.MaxBytes = 12 << 20
	cfg.Limits.MaxElements = 1 << 20
	return &hostileSet{policy: p, gw: gw, cfg: cfg}
}

// hostile describes a message an attacker can make from the gateway's
// certificate alone.
type hostile struct {
	// keys EncryptedKeys, each a real RSA-OAEP wrap of a fresh AES key for
	// the gateway (garbage: random bytes instead, which fail to unwrap);
	// the last one's ReferenceList names the Body's EncryptedData.
	keys    int
	garbage bool
	// digest is the last EncryptedKey's OAEP DigestMethod ("": none).
	digest string
	// cipher is the Body EncryptedData's algorithm ("": AES-256-CBC).
	cipher string
	// pad bytes of text in the Body.
	pad int
	// sig places a ds:Signature that verifies with no key in the Security
	// header: "" none, "first" or "last"; bodyRef makes its Reference name
	// the Body.
	sig     string
	bodyRef bool
}

// message builds the hostile message.
func (h *hostileSet) message(tb testing.TB, o hostile) []byte {
	tb.Helper()
	pub := h.gw.Cert.PublicKey.(*rsa.PublicKey)
	ski := base64.StdEncoding.EncodeToString(h.gw.Cert.SubjectKeyId)
	ref := "#nothing"
	if o.bodyRef {
		ref = "#body"
	}
	sig := `<ds:Signature><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/><ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/><ds:Reference URI="` + ref + `"><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue>AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=</ds:DigestValue></ds:Reference></ds:SignedInfo><ds:SignatureValue>AAAA</ds:SignatureValue><ds:KeyInfo><wsse:SecurityTokenReference><wsse:KeyIdentifier ValueType="` + vtSKI + `" EncodingType="` + encBase64 + `">` + ski + `</wsse:KeyIdentifier></wsse:SecurityTokenReference></ds:KeyInfo></ds:Signature>`
	var b strings.Builder
	b.WriteString(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:ds="` + nsDS + `" xmlns:xenc="` + nsXEnc + `" xmlns:wsse="` + nsWSSE + `" xmlns:wsu="` + nsWSU + `"><soap:Header><wsse:Security>`)
	if o.sig == "first" {
		b.WriteString(sig)
	}
	for i := range o.keys {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		ct, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, pub, key, nil)
		if err != nil {
			tb.Fatal(err)
		}
		if o.garbage {
			_, _ = rand.Read(ct)
		}
		dm := ""
		if i == o.keys-1 && o.digest != "" {
			dm = `<ds:DigestMethod Algorithm="` + o.digest + `"/>`
		}
		fmt.Fprintf(&b, `<xenc:EncryptedKey Id="EK-%d"><xenc:EncryptionMethod Algorithm="%s">%s</xenc:EncryptionMethod><ds:KeyInfo><wsse:SecurityTokenReference><wsse:KeyIdentifier ValueType="%s" EncodingType="%s">%s</wsse:KeyIdentifier></wsse:SecurityTokenReference></ds:KeyInfo><xenc:CipherData><xenc:CipherValue>%s</xenc:CipherValue></xenc:CipherData>`,
			i, wcrypto.AlgRSAOAEPMGF1P, dm, vtSKI, encBase64, ski, base64.StdEncoding.EncodeToString(ct))
		if i == o.keys-1 {
			b.WriteString(`<xenc:ReferenceList><xenc:DataReference URI="#ED-body"/></xenc:ReferenceList>`)
		}
		b.WriteString(`</xenc:EncryptedKey>`)
	}
	if o.sig == "last" {
		b.WriteString(sig)
	}
	b.WriteString(`</wsse:Security></soap:Header><soap:Body wsu:Id="body"><m:Pad xmlns:m="urn:pad">`)
	line := strings.Repeat("x", 63) + "\n"
	for n := 0; n < o.pad; {
		chunk := min(o.pad-n, 64<<10)
		b.WriteString(`<m:Line>`)
		b.WriteString(strings.Repeat(line, chunk/len(line)+1)[:chunk])
		b.WriteString(`</m:Line>`)
		n += chunk
	}
	cipher := o.cipher
	if cipher == "" {
		cipher = wcrypto.AlgAES256CBC
	}
	iv := make([]byte, 48)
	_, _ = rand.Read(iv)
	fmt.Fprintf(&b, `</m:Pad><xenc:EncryptedData Id="ED-body" Type="%sContent"><xenc:EncryptionMethod Algorithm="%s"/><xenc:CipherData><xenc:CipherValue>%s</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData></soap:Body></soap:Envelope>`,
		nsXEnc, cipher, base64.StdEncoding.EncodeToString(iv))
	return []byte(b.String())
}

// BenchmarkHostile times, in one loop, the DOM engine rejecting a hostile
// unsigned ~10 MiB message under a policy that requires a signature, and
// one whole gate pass (xmlscan.Scan) over the same bytes, and reports
// their ratio as x-gate (issue 13: at most 2). Run:
//
//	go test -run '^$' -bench BenchmarkHostile -benchtime 5x ./internal/dom/
//
// keys: the message is EncryptedKeys, each one a real RSA-OAEP wrap for
// the gateway, the last for an AES-CBC EncryptedData (an unbounded count
// once cost ~1 ms of RSA each; the gate now stops at xml.maxEncryptedKeys).
// padded: four such EncryptedKeys and 10 MiB of Body text.
// fake-signature: the same with a ds:Signature after the keys that
// references the Body but verifies with no key (CBC is refused before any
// unwrap).
func BenchmarkHostile(b *testing.B) {
	h := newHostileSet(b)
	const size = 10 << 20
	// The bytes one more EncryptedKey adds.
	perKey := len(h.message(b, hostile{keys: 2})) - len(h.message(b, hostile{keys: 1}))
	for _, c := range []struct {
		name string
		o    hostile
	}{
		{"keys-10MiB", hostile{keys: size / perKey}},
		{"padded-10MiB", hostile{keys: 4, pad: size}},
		{"fake-signature-10MiB", hostile{keys: 4, pad: size, sig: "last", bodyRef: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			msg := h.message(b, c.o)
			e, err := New(h.cfg)
			if err != nil {
				b.Fatal(err)
			}
			// The yardstick is one whole gate pass over the bytes: the
			// engine's gate configuration without the encryption counts,
			// which stop the engine's own gate early on keys-10MiB.
			yard := h.cfg
			yard.Limits.MaxEncryptedKeys, yard.Limits.MaxEncryptedData = math.MaxInt, math.MaxInt
			sc, err := xmlscan.NewScanner(yard)
			if err != nil {
				b.Fatal(err)
			}
			var doc xmlscan.Document
			now := time.Now()
			var engine, gate time.Duration
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if _, err := e.Process(msg, h.policy, now); err == nil {
					b.Fatal("the hostile message was accepted")
				}
				t1 := time.Now()
				if err := sc.Scan(msg, &doc); err != nil {
					b.Fatalf("the yardstick gate stopped early: %v", err)
				}
				doc.Reset()
				t2 := time.Now()
				engine += t1.Sub(t0)
				gate += t2.Sub(t1)
			}
			b.StopTimer()
			_, err = e.Process(msg, h.policy, now)
			b.Logf("%s: %d bytes, %d EncryptedKeys: %v", c.name, len(msg), c.o.keys, err)
			b.ReportMetric(float64(engine.Nanoseconds())/float64(b.N), "engine-ns/op")
			b.ReportMetric(float64(gate.Nanoseconds())/float64(b.N), "gate-ns/op")
			b.ReportMetric(float64(engine)/float64(gate), "x-gate")
		})
	}
}

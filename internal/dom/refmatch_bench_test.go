package dom

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/wss"
)

// BenchmarkRecipient is the per-message cost of finding the decryption key
// an EncryptedKey's KeyInfo names (message.recipient: reading the
// reference, comparing it with the policy's decryption certificates), per
// reference kind, with one decryption key and with two (a rotation: the
// message names the second). Each iteration runs the lookup as it is and
// as it was before the certificates' lookup values were kept
// (recipientBefore: both issuer DNs parsed and canonicalized, SKI and
// thumbprint computed, per key and message), timing each by the thread's
// CPU time so both see the same machine load. It reports the kept path's
// ns/op and allocations, the old one's as before-ns/op and
// before-allocs/op, and their ratio x-before. Both read the reference
// with today's keyInfo: for an X509Data that carries the certificate
// (issuer-serial+cert), finding the carried one is today's on both sides.
// Run:
//
//	go test -run '^$' -bench Recipient -benchtime 20000x ./internal/dom/
func BenchmarkRecipient(b *testing.B) {
	pki := newRefPKI(b, true)
	dir := b.TempDir()
	files := map[string]config.KeyFiles{}
	for _, l := range pki.all {
		cf, kf := filepath.Join(dir, l.name+".crt"), filepath.Join(dir, l.name+".key")
		kder, err := x509.MarshalPKCS8PrivateKey(l.key)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: l.cert.Raw}), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
			b.Fatal(err)
		}
		files[l.name] = config.KeyFiles{CertFile: cf, KeyFile: kf}
	}
	policy := func(names ...string) *wss.Policy {
		pc := config.DefaultPolicy()
		pc.Replay = "off"
		for _, n := range names {
			pc.DecryptionKeys = append(pc.DecryptionKeys, files[n])
		}
		p, err := wss.Compile("recipient", pc, nil, reload.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	// The named key is "intl" (a six-attribute issuer); the other key of
	// two is "a", of another issuer and serial.
	target := pki.leaves["intl"].cert
	const intlDN = `CN=Jürgen's CA,EMAILADDRESS=pki@example.org,SERIALNUMBER=HRB 4711,O=Müller\+Söhne \"GmbH\"\; \&lt;Köln\&gt;,L=Köln,C=DE`
	str := func(inner string) string {
		return `<ds:KeyInfo xmlns:ds="` + nsDS + `"><wsse:SecurityTokenReference xmlns:wsse="` + nsWSSE + `">` + inner + `</wsse:SecurityTokenReference></ds:KeyInfo>`
	}
	keyID := func(vt string, v []byte) string {
		return str(`<wsse:KeyIdentifier EncodingType="` + encBase64 + `" ValueType="` + vt + `">` + base64.StdEncoding.EncodeToString(v) + `</wsse:KeyIdentifier>`)
	}
	issuerSerial := `<ds:X509IssuerSerial><ds:X509IssuerName>` + intlDN + `</ds:X509IssuerName><ds:X509SerialNumber>` + target.SerialNumber.String() + `</ds:X509SerialNumber></ds:X509IssuerSerial>`
	kinds := []struct{ name, keyInfo string }{
		{"issuer-serial", str(`<ds:X509Data>` + issuerSerial + `</ds:X509Data>`)},
		{"ski", keyID(vtSKI, computedSKI(b, target))},
		{"thumbprint", keyID(vtThumbprint, sha1Of(target.Raw))},
		{"x509v3", keyID(vtX509v3, target.Raw)},
		{"issuer-serial+cert", str(`<ds:X509Data>` + issuerSerial + `<ds:X509Certificate>` + base64.StdEncoding.EncodeToString(target.Raw) + `</ds:X509Certificate></ds:X509Data>`)},
	}
	for _, keys := range []struct {
		name string
		p    *wss.Policy
	}{{"1key", policy("intl")}, {"2keys", policy("a", "intl")}} {
		for _, kind := range kinds {
			b.Run(keys.name+"/"+kind.name, func(b *testing.B) {
				m := loadPlain(b, kind.keyInfo)
				m.p = keys.p
				ki := m.find(b, "KeyInfo")
				kept := func() {
					if k, err := m.recipient(ki); err != nil || !k.Certificate.Equal(target) {
						b.Fatal("kept: wrong key", err)
					}
				}
				before := func() {
					if k, err := recipientBefore(m, ki); err != nil || !k.Certificate.Equal(target) {
						b.Fatal("before: wrong key", err)
					}
				}
				b.ReportAllocs()
				allocs, bytes := benchMem(kept)
				bAllocs, bBytes := benchMem(before)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var keptT, beforeT time.Duration
				for b.Loop() {
					t0 := threadCPU()
					kept()
					t1 := threadCPU()
					before()
					keptT += t1 - t0
					beforeT += threadCPU() - t1
				}
				n := float64(b.N)
				b.ReportMetric(float64(keptT.Nanoseconds())/n, "ns/op")
				b.ReportMetric(allocs, "allocs/op")
				b.ReportMetric(bytes, "B/op")
				b.ReportMetric(float64(beforeT.Nanoseconds())/n, "before-ns/op")
				b.ReportMetric(bAllocs, "before-allocs/op")
				b.ReportMetric(bBytes, "before-B/op")
				b.ReportMetric(float64(keptT)/float64(beforeT), "x-before")
				fmt.Printf("%-40s kept %7.2f µs %4.0f allocs %6.0f B | before %7.2f µs %4.0f allocs %6.0f B | kept/before %.3f\n",
					b.Name(), float64(keptT.Nanoseconds())/n/1e3, allocs, bytes,
					float64(beforeT.Nanoseconds())/n/1e3, bAllocs, bBytes, float64(keptT)/float64(beforeT))
			})
		}
	}
}

// recipientBefore is message.recipient as it was before (issue 14): the
// reference compared with each decryption certificate by
// refMatchesBefore.
func recipientBefore(m *message, ki int) (*crypto.KeyPair, error) {
	ref, err := m.keyInfo(ki)
	if err != nil {
		return nil, err
	}
	for _, k := range m.p.DecryptionKeys() {
		if refMatchesBefore(ref, k.Certificate) {
			return k, nil
		}
	}
	return nil, wss.Failf(wss.ReasonToken, "EncryptedKey for a certificate that is not ours")
}

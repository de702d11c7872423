package dom

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/testvectors"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// The plaintext splice (message.reload, xmlscan.ScanReplace) against the
// engine as it was before issue 14, which gated the whole message again
// after each decryption (Engine.wholeRescan): on every message both must
// give the same Result, the same forwarded bytes, or the same error.

// spliceEngines returns the engine under test and the whole-rescan one.
func spliceEngines(t testing.TB) (splice, whole *Engine) {
	t.Helper()
	splice, whole = newEngine(t), newEngine(t)
	whole.wholeRescan = true
	return splice, whole
}

// outcome is what a Process call decides, without its timings.
type outcome struct {
	err      string
	res      *wss.Result
	forward  []byte
	unsigned []wss.Unsigned
}

func processOutcome(e *Engine, msg []byte, p *wss.Policy, now time.Time) outcome {
	res, err := e.Process(msg, p, now)
	if err != nil {
		return outcome{err: err.Error()}
	}
	res.GateTime, res.DecryptTime, res.ProcessTime = 0, 0, 0
	fwd, unsigned := res.Forward(p)
	return outcome{res: res, forward: fwd, unsigned: unsigned}
}

// encSlot is one EncryptedData of a test message: where it goes and what
// it decrypts to.
type encSlot struct {
	where   string // "body" (Body content), "wrap" (element in the Body), "header" (EncryptedHeader), "security"
	content bool   // Type Content, else Element
	plain   string
}

// encMessage builds a message whose one EncryptedKey (for f's recipient)
// lists an EncryptedData per slot, in document order of the slots'
// places: Security header, then Header, then Body.
func (f *attFixture) encMessage(t testing.TB, slots []encSlot) []byte {
	t.Helper()
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	ek, err := wcrypto.EncryptKey(wcrypto.AlgRSAOAEPMGF1P, "", "", f.recipient.Cert.PublicKey.(*rsa.PublicKey), key)
	require.NoError(t, err)
	x := `xmlns:xenc="` + nsXEnc + `"`
	var refs strings.Builder
	parts := map[string]string{}
	for k, s := range slots {
		ct, err := wcrypto.EncryptData(wcrypto.AlgAES128GCM, key, []byte(s.plain), nil)
		require.NoError(t, err)
		typ := typeElement
		if s.content {
			typ = typeContent
		}
		id := fmt.Sprintf("ED-%d", k)
		fmt.Fprintf(&refs, `<xenc:DataReference URI="#%s"/>`, id)
		ed := `<xenc:EncryptedData ` + x + ` Id="` + id + `" Type="` + typ + `"><xenc:EncryptionMethod Algorithm="` + wcrypto.AlgAES128GCM + `"/>` +
			`<xenc:CipherData><xenc:CipherValue>` + base64.StdEncoding.EncodeToString(ct) + `</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData>`
		if s.where == "header" {
			ed = `<wsse11:EncryptedHeader xmlns:wsse11="` + nsWSSE11 + `" wsu:Id="EH-` + id + `">` + ed + `</wsse11:EncryptedHeader>`
		}
		parts[s.where] += ed
	}
	sec := `<wsse:Security xmlns:wsse="` + nsWSSE + `"><xenc:EncryptedKey ` + x + ` Id="EK"><xenc:EncryptionMethod Algorithm="` + wcrypto.AlgRSAOAEPMGF1P + `"/>` +
		`<xenc:CipherData><xenc:CipherValue>` + base64.StdEncoding.EncodeToString(ek) + `</xenc:CipherValue></xenc:CipherData>` +
		`<xenc:ReferenceList>` + refs.String() + `</xenc:ReferenceList></xenc:EncryptedKey>` + parts["security"] + `</wsse:Security>`
	body := "\n  " + parts["body"] + "\n"
	if w, ok := parts["wrap"]; ok {
		body = `<w:wrap xmlns:w="urn:wrap" xmlns="urn:default">` + "\n  <w:first/>" + w + "text &amp; more</w:wrap>" + parts["body"]
	}
	return []byte(`<soap:Envelope ` + tsNS + ` xmlns:p="urn:outer"><soap:Header>` + sec + parts["header"] +
		`<p:Plain>kept</p:Plain></soap:Header><soap:Body wsu:Id="Body">` + body + `</soap:Body></soap:Envelope>`)
}

func TestSpliceMatchesWholeRescan(t *testing.T) {
	f := newAttFixture(t)
	f.requireSig = false
	p := f.policy(t)
	splice, whole := spliceEngines(t)
	created := f.now.Add(-time.Second).Format("2006-01-02T15:04:05Z")
	ts := `<wsu:Timestamp wsu:Id="TS"><wsu:Created>` + created + `</wsu:Created></wsu:Timestamp>`
	op := `<ns:op xmlns:ns="urn:x"><ns:a n="1">one</ns:a><ns:b/></ns:op>`
	for _, tc := range []struct {
		name  string
		slots []encSlot
	}{
		{"ok/body content", []encSlot{{"body", true, op}}},
		{"ok/body content with text and references around", []encSlot{{"body", true, "\n    " + op + "\n  a &amp; b &#x20;\n"}}},
		{"ok/body content text only", []encSlot{{"body", true, "plain text"}}},
		{"ok/body element in context", []encSlot{{"wrap", false, `<w:item w:x="1"><inherits/></w:item>`}}},
		{"ok/several EncryptedData", []encSlot{{"wrap", false, `<w:a/>`}, {"wrap", false, `<w:b>2</w:b>`}, {"body", true, op}}},
		{"ok/EncryptedHeader", []encSlot{{"header", false, `<h:Session xmlns:h="urn:h" soap:mustUnderstand="0">tok</h:Session>`}}},
		{"ok/EncryptedHeader and Body", []encSlot{{"header", false, `<h:Session xmlns:h="urn:h">tok</h:Session>`}, {"body", true, op}}},
		{"ok/encrypted Timestamp in the Security header", []encSlot{{"security", false, ts}, {"body", true, op}}},
		{"ok/prefix redeclared", []encSlot{{"body", true, `<soap:x xmlns:soap="urn:not-soap"><p:y xmlns:p="urn:p2" p:z="1"/></soap:x>`}}},
		{"ok/default namespace set and undeclared", []encSlot{{"body", true, `<op xmlns="urn:d"><in xmlns=""><deep/></in></op>`}}},
		{"ok/outer prefix used", []encSlot{{"body", true, `<p:op p:attr="v"/>`}}},
		{"ok/CDATA and CR", []encSlot{{"body", true, "<op><![CDATA[<x>]]>\r\n</op>"}}},
		{"ok/ids in the plaintext", []encSlot{{"body", true, `<op wsu:Id="in-1"><x Id="in-2"/></op>`}}},
		{"fail/comment", []encSlot{{"body", true, `<op><!-- c --></op>`}}},
		{"fail/SOAP Body in the plaintext", []encSlot{{"body", true, `<soap:Body/>`}}},
		{"fail/closes the Body", []encSlot{{"body", true, `</soap:Body><soap:Body>`}}},
		{"fail/unclosed", []encSlot{{"body", true, `<op>`}}},
		{"fail/undeclared prefix", []encSlot{{"body", true, `<q:op/>`}}},
		{"fail/duplicate id", []encSlot{{"body", true, `<op wsu:Id="Body"/>`}}},
		{"fail/value element with a child", []encSlot{{"body", true, `<wsu:Created><x/></wsu:Created>`}}},
		{"fail/two elements for Element", []encSlot{{"wrap", false, `<w:a/><w:b/>`}}},
		{"fail/text for Element", []encSlot{{"wrap", false, `abc`}}},
		{"fail/more ciphertext", []encSlot{{"body", true, `<xenc:EncryptedData xmlns:xenc="` + nsXEnc + `"/>`}}},
		{"fail/doctype", []encSlot{{"body", true, `<!DOCTYPE x><op/>`}}},
		{"fail/invalid UTF-8", []encSlot{{"body", true, "<op>\xff</op>"}}},
		{"fail/EncryptedHeader holding text after the block", []encSlot{{"header", false, `<h:S xmlns:h="urn:h"/>x`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := f.encMessage(t, tc.slots)
			got := processOutcome(splice, msg, p, f.now)
			want := processOutcome(whole, msg, p, f.now)
			require.Equal(t, want, got)
			if strings.HasPrefix(tc.name, "ok/") {
				require.Empty(t, got.err)
				require.Len(t, got.res.Decrypted, len(tc.slots))
			} else {
				require.NotEmpty(t, got.err)
			}
		})
	}
}

// TestSpliceVectors runs both engines over the WSS4J-made messages
// (Process) and the XML Encryption test vectors (DecryptDocument, when
// ../shared has them).
func TestSpliceVectors(t *testing.T) {
	splice, whole := spliceEngines(t)
	t.Run("ok/wss4j", func(t *testing.T) {
		needVectors(t)
		p := vectorPolicy(t, nil)
		files, err := filepath.Glob(filepath.Join(vectorDir, "*", "*.xml"))
		require.NoError(t, err)
		decrypted := 0
		for _, name := range files {
			msg, err := os.ReadFile(name)
			require.NoError(t, err)
			now := createdOf(t, msg).Add(time.Second)
			got := processOutcome(splice, msg, p, now)
			require.Equal(t, processOutcome(whole, msg, p, now), got, name)
			if got.res != nil && len(got.res.Decrypted) > 0 {
				decrypted++
			}
		}
		require.Positive(t, decrypted)
	})
	t.Run("ok/xmlsec", func(t *testing.T) {
		root := testvectors.Path(t, "xmlsec")
		pols := loadConformancePolicies(t)
		accepted := 0
		err := filepath.WalkDir(root, func(path string, de os.DirEntry, err error) error {
			if err != nil || de.IsDir() || filepath.Ext(path) != ".xml" {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil || !strings.Contains(string(data), "EncryptedData") {
				return err
			}
			for _, p := range []*wss.Policy{pols.def, pols.legacy} {
				g, gerr := splice.DecryptDocument(data, p, conformanceNow)
				w, werr := whole.DecryptDocument(data, p, conformanceNow)
				require.Equal(t, fmt.Sprint(werr), fmt.Sprint(gerr), path)
				require.Equal(t, w, g, path)
				if gerr == nil {
					accepted++
				}
			}
			return nil
		})
		require.NoError(t, err)
		require.Positive(t, accepted)
	})
}

// TestSpliceGateLimits checks the plaintext against the whole message's
// limits on both engines: one more element or namespace declaration than
// the limit allows, counted over the whole message, fails alike.
func TestSpliceGateLimits(t *testing.T) {
	f := newAttFixture(t)
	f.requireSig = false
	msg := f.encMessage(t, []encSlot{{"body", true, strings.Repeat(`<a xmlns="urn:a"/>`, 20)}})
	var d xmlscan.Document
	require.NoError(t, xmlscan.Scan(msg, &d))
	for _, tc := range []struct {
		name string
		lim  xmlscan.Limits
		fail bool
	}{
		{"ok/elements at the limit", xmlscan.Limits{MaxElements: len(d.Elements) - 4 + 20}, false},
		{"fail/elements", xmlscan.Limits{MaxElements: len(d.Elements) - 4 + 19}, true},
		{"fail/namespace declarations", xmlscan.Limits{MaxNSDecls: len(d.NSDecls) + 18}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := xmlscan.DefaultConfig()
			cfg.Limits = tc.lim
			splice, err := New(cfg)
			require.NoError(t, err)
			whole, err := New(cfg)
			require.NoError(t, err)
			whole.wholeRescan = true
			pc := config.DefaultPolicy()
			pc.Replay, pc.Require = "off", nil
			pc.DecryptionKeys = []config.KeyFiles{{CertFile: f.recipient.CertFile, KeyFile: f.recipient.KeyFile}}
			p, err := wss.Compile("limits", pc, nil, reload.Options{})
			require.NoError(t, err)
			got := processOutcome(splice, msg, p, f.now)
			require.Equal(t, processOutcome(whole, msg, p, f.now), got)
			require.Equal(t, tc.fail, got.err != "", got.err)
		})
	}
}

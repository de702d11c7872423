package main

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// TestPartnerKeys: the new partners' self-signed certificates, written as
// the benchmark writes them and pinned as its mix policy pins them, are
// trusted for every key reference the new partners draw (the BST, and
// the thumbprint, SKI and IssuerSerial looked up among the pins); partner
// i signs with key i mod the keys (a policy pinning only that key accepts
// it, one pinning only the other refuses it), and the pins are what trust
// them: the mix policy without them refuses the same messages. With no
// keys of their own, the partners sign with the mix's key.
func TestPartnerKeys(t *testing.T) {
	kps, err := newPartnerKeys(2)
	if err != nil {
		t.Fatal(err)
	}
	files, err := writeCerts(t.TempDir(), kps)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || bytes.Equal(kps[0].Certificate.Raw, kps[1].Certificate.Raw) {
		t.Fatalf("%d certificate files for 2 keys, or the two certificates are one", len(files))
	}
	keys := filepath.Join("..", "..", "examples", "keys")
	compile := func(ca bool, pinned ...string) *wss.Policy {
		p := config.DefaultPolicy()
		p.Replay = "off"
		if ca {
			p.Trust.CAFiles = []string{filepath.Join(keys, "ca.crt")}
			p.Trust.KnownCertFiles = []string{filepath.Join(keys, "partner.crt")}
		}
		p.Trust.PinnedCertFiles = pinned
		pol, err := wss.Compile("mix", p, nil, reload.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return pol
	}
	mix, unpinned := compile(true, files...), compile(true)
	only := []*wss.Policy{compile(false, files[0]), compile(false, files[1])}
	e, err := dom.New(xmlscan.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPools(keys, 1)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	verifies := func(body []byte, pol *wss.Policy) bool {
		_, err := e.Process(body, pol, now)
		return err == nil
	}

	p.partnerKeys = kps
	refs := map[string]bool{}
	forms := map[string]string{"BinarySecurityToken": "bst", "ThumbprintSHA1": "thumbprint",
		"X509SubjectKeyIdentifier": "ski", "X509IssuerSerial": "issuer-serial"}
	for round := 0; len(refs) < len(forms); round++ {
		if round == 10 {
			t.Fatalf("10 rounds of new partners drew only the key references %v", refs)
		}
		g, err := p.partners(4)
		if err != nil {
			t.Fatal(err)
		}
		for i, msgs := range g.all {
			if len(msgs) != partnerMessages {
				t.Fatalf("partner %d: %d messages, want %d", i, len(msgs), partnerMessages)
			}
			k := i % len(kps)
			for _, rq := range msgs {
				if _, err := e.Process(rq.body, mix, now); err != nil {
					t.Fatalf("new partner %d (key %d) refused by the mix policy: %v\n%s", i, k, err, rq.body)
				}
				if verifies(rq.body, unpinned) {
					t.Fatalf("new partner %d accepted without its certificate pinned", i)
				}
				if !verifies(rq.body, only[k]) || verifies(rq.body, only[1-k]) {
					t.Fatalf("new partner %d not signed with key %d alone", i, k)
				}
				for marker, form := range forms {
					if bytes.Contains(rq.body, []byte(marker)) {
						refs[form] = true
					}
				}
			}
		}
	}

	p.partnerKeys = nil
	g, err := p.partners(2)
	if err != nil {
		t.Fatal(err)
	}
	for i, msgs := range g.all {
		if !verifies(msgs[0].body, unpinned) {
			t.Fatalf("with no keys of their own, new partner %d is not signed with the mix's key", i)
		}
	}
}

// TestYAMLList: the pinned files are a YAML flow sequence of quoted
// paths, empty when there are none.
func TestYAMLList(t *testing.T) {
	if got, want := yamlList([]string{"a b/c.crt", `d"e.crt`}), `["a b/c.crt", "d\"e.crt"]`; got != want {
		t.Errorf("yamlList = %s, want %s", got, want)
	}
	if got := yamlList(nil); got != "[]" {
		t.Errorf("yamlList(nil) = %s, want []", got)
	}
}

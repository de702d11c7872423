package testtraffic

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testpki"
)

// testKey is a partner key of a test CA.
func testKey(t *testing.T) *wcrypto.KeyPair {
	t.Helper()
	leaf := testpki.NewCA(t, "testtraffic CA").IssueRSA(t, t.TempDir(), "partner")
	return &wcrypto.KeyPair{Signer: leaf.Key, Certificate: leaf.Cert}
}

// fixedClock makes the bytes reproducible.
func fixedClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func testGenerator(t *testing.T, seed uint64, variety bool) *Generator {
	t.Helper()
	g := New(seed, testKey(t), fixedClock)
	g.Variety = variety
	return g
}

// TestListLen checks the long tail issue 14 asks for: lengths within
// 0–100, most lists short, some long.
func TestListLen(t *testing.T) {
	g := New(1, nil, fixedClock)
	const n = 20000
	var short, long, zero, full int
	for range n {
		l := listLen(g.r)
		if l < 0 || l > maxItems {
			t.Fatalf("length %d outside 0–%d", l, maxItems)
		}
		switch {
		case l == 0:
			zero++
		case l >= 50:
			long++
		}
		if l <= 10 {
			short++
		}
		if l == maxItems {
			full++
		}
	}
	if short < n*6/10 {
		t.Errorf("%d of %d lists have ≤ 10 items, want most", short, n)
	}
	if long < n/20 || long > n/5 {
		t.Errorf("%d of %d lists have ≥ 50 items, want 5–20 %%", long, n)
	}
	if zero == 0 || full == 0 {
		t.Errorf("empty lists %d, full lists %d: both ends must occur", zero, full)
	}
}

// TestDeterministic: the same seed makes the same signed bytes, another
// seed different ones, in both modes.
func TestDeterministic(t *testing.T) {
	for _, variety := range []bool{false, true} {
		t.Run(fmt.Sprintf("ok/variety=%v", variety), func(t *testing.T) {
			kp := testKey(t)
			a, b, other := New(7, kp, fixedClock), New(7, kp, fixedClock), New(8, kp, fixedClock)
			a.Variety, b.Variety, other.Variety = variety, variety, variety
			differ := false
			for i := range 20 {
				ma, err := a.Next()
				if err != nil {
					t.Fatal(err)
				}
				mb, _ := b.Next()
				mc, _ := other.Next()
				if !bytes.Equal(ma.Signed, mb.Signed) {
					t.Fatalf("message %d differs between two runs of seed 7", i)
				}
				differ = differ || !bytes.Equal(ma.Signed, mc.Signed)
			}
			if !differ {
				t.Error("seeds 7 and 8 made the same messages")
			}
		})
	}
}

// TestVarietyCovers: in 300 messages the variety mix writes every form
// the package documentation promises, and the default mix none of the
// forms that would change bench/templates's figures.
func TestVarietyCovers(t *testing.T) {
	forms := map[string]*regexp.Regexp{
		"default namespace payload":       regexp.MustCompile(`<[A-Z][A-Za-z]+ xmlns="urn:example:svc`),
		"prefix shadowing the envelope's": regexp.MustCompile(`<(soapenv|s|wsa|a|wsse|wsu|ds):[A-Z][A-Za-z]+ xmlns:(soapenv|s|wsa|a|wsse|wsu|ds)="urn:example:svc`),
		"declaration on the Body":         regexp.MustCompile(`:Body xmlns(:[a-z0-9]+)?="urn:example:svc`),
		"declaration on the Envelope":     regexp.MustCompile(`:Envelope [^>]*xmlns(:[a-z0-9]+)?="urn:example:svc`),
		"redeclared mid-tree":             regexp.MustCompile(`(Lines|References) xmlns(:q|:[a-z0-9]+)?="urn:example:svc[^"]*">`),
		"bound to another URI mid-tree":   regexp.MustCompile(`:lists">`),
		"xmlns undeclaration":             regexp.MustCompile(`xmlns=""`),
		"unused declaration":              regexp.MustCompile(`xmlns:unused=`),
		"character reference":             regexp.MustCompile(`&#x?[0-9A-F]+;`),
		"escaped CDATA end":               regexp.MustCompile(`\]\](&gt;|&#x3E;)`),
		"CR reference":                    regexp.MustCompile(`&#(xD|13);`),
		"raw CRLF":                        regexp.MustCompile("\r\n"),
		"raw > in text":                   regexp.MustCompile(`a < b > c|>[^<]*[^\]]>[^<]*<`),
		"attribute with raw tab":          regexp.MustCompile("note=\"[^\"]*\t"),
		"single-quoted attribute":         regexp.MustCompile(`[a-z]='[^']*'`),
		"empty element":                   regexp.MustCompile(`/>|<([A-Za-z:]+)></([A-Za-z:]+)>`),
		"indentation":                     regexp.MustCompile(">\n +<"),
		"attributes that sort by URI":     regexp.MustCompile(`xmlns:za="urn:example:attrs:a"`),
		"prefix used by attributes below": regexp.MustCompile(` ext:flag="y"`),
	}
	seen := map[string]int{}
	g := testGenerator(t, 11, true)
	for range 300 {
		m, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		for name, re := range forms {
			if re.Match(m.Plain) {
				seen[name]++
			}
		}
	}
	for name := range forms {
		if seen[name] == 0 {
			t.Errorf("fail/%s: no message has it", name)
		}
	}
	t.Logf("messages with each form: %v", seen)
	plain := testGenerator(t, 11, false)
	for range 100 {
		m, err := plain.Next()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"character reference", "xmlns undeclaration", "indentation", "unused declaration"} {
			if forms[name].Match(m.Plain) {
				t.Fatalf("the default mix has %s: bench/templates's figures would move", name)
			}
		}
	}
}

func TestLargeEnvelope(t *testing.T) {
	for _, size := range []int{1 << 10, 1 << 20} {
		b := LargeEnvelope(size)
		if len(b) < size-300 || len(b) > size+300 {
			t.Fatalf("LargeEnvelope(%d) is %d bytes", size, len(b))
		}
		if !strings.HasSuffix(string(b), "</soapenv:Envelope>") || strings.Count(string(b), "<m:item ") < size/300 {
			t.Fatalf("LargeEnvelope(%d): not records in an envelope", size)
		}
	}
}

package dom

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/testvectors"
	"github.com/wssgw/wssgw/internal/wss"
)

// The conformance run over xmlsec's XML Signature and XML Encryption test
// vectors (shared/vectors/xmlsec, MANIFEST.tsv). Every MANIFEST row is a
// subtest; wssgwExpect (conformance_table_test.go) states, for every vector,
// the outcome under wssgw's policy and, where it differs from xmlsec's, why.
//
// The c14n sets (merlin-c14n-three, merlin-exc-c14n-one) are checked byte
// for byte in internal/c14n (TestMerlinC14NThree, TestMerlinExcC14NOne);
// here their signatures only go through VerifyDocument like any other.

// xmlsecDir is the xmlsec set (../shared/vectors/xmlsec, too large to
// commit); tests reach it through readManifest or testvectors.Path first,
// which skip when it is absent.
var xmlsecDir, _ = testvectors.Find("xmlsec")

// Outcomes of a vector under wssgw.
const (
	accept = "accept"
	reject = "reject"
	// absent: MANIFEST.tsv lists the vector but the set does not ship it
	// (xmlsec's xmldsig2ed-tests, merlin-xpath-filter2-three, one phaos
	// vector). The test fails if it appears, so that it gets classified.
	absent = "absent"
)

// expectation is wssgw's outcome for one vector.
type expectation struct {
	outcome string
	reason  wss.Reason // for reject
	// why wssgw's outcome differs from xmlsec's expected one; required
	// whenever a MANIFEST row of the vector expects otherwise.
	why string
	// legacy is the outcome under the legacy policy (every legacy opt-in:
	// SHA-1, CBC, RSA-1.5, inclusive C14N), stated for the vectors the
	// default policy rejects for an algorithm: what, if anything, still
	// stands in the way once the algorithm is allowed.
	legacy *legacyExpectation
}

type legacyExpectation struct {
	outcome string
	reason  wss.Reason
}

// manifestRow is one line of MANIFEST.tsv.
type manifestRow struct {
	line                         int
	kind, expected, vector       string
	algorithms, keyData, options string
}

func readManifest(t *testing.T) []manifestRow {
	t.Helper()
	f, err := os.Open(testvectors.Path(t, "xmlsec/MANIFEST.tsv"))
	require.NoError(t, err)
	defer f.Close()
	var rows []manifestRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			require.Equal(t, "kind\texpected\tvector", strings.Join(strings.SplitN(sc.Text(), "\t", 4)[:3], "\t"))
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		require.Len(t, cols, 6, "MANIFEST.tsv line %d", n)
		rows = append(rows, manifestRow{line: n, kind: cols[0], expected: cols[1], vector: cols[2],
			algorithms: cols[3], keyData: cols[4], options: cols[5]})
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows)
	return rows
}

// nistTemplate is the vector name of xmlsec's NIST AES-GCM loop rows: the
// test script runs them for every nist-aesgcm/aesN/*.xml, expecting success
// when a .data file (the plaintext) is beside it and failure otherwise.
const nistTemplate = "$base_test_name"

// conformanceNow is the clock of the run: inside the validity of the
// vectors' 2026 keys/ certificates (rsa-expired-cert has expired by then).
var conformanceNow = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// conformancePolicies are the default and legacy policies of the run. Both
// trust every CA of the sets (the anchors xmlsec1 is given with
// --trusted-*) and hold every RSA key pair the encryption vectors were made
// for: a vector wssgw rejects is then rejected for what it is, not for a
// key the run forgot. merlin-xmlenc-five/rsapriv.p12 is left out: a
// 1024-bit RSA key, which wssgw refuses to load (minimum 2048 bits).
type conformancePolicies struct {
	def, legacy *wss.Policy
}

var (
	policiesOnce sync.Once
	policies     conformancePolicies
	policiesErr  error
)

func loadConformancePolicies(t *testing.T) conformancePolicies {
	t.Helper()
	policiesOnce.Do(func() { policies, policiesErr = buildConformancePolicies() })
	require.NoError(t, policiesErr)
	return policies
}

func buildConformancePolicies() (conformancePolicies, error) {
	dir, err := os.MkdirTemp("", "wssgw-conformance")
	if err != nil {
		return conformancePolicies{}, err
	}
	defer os.RemoveAll(dir)
	v := func(rel string) string { return filepath.Join(xmlsecDir, rel) }
	pw := func(name, secret string) (string, error) {
		f := filepath.Join(dir, name)
		return f, os.WriteFile(f, []byte(secret), 0o600)
	}
	p := config.DefaultPolicy()
	p.Trust = config.Trust{
		CAFiles: []string{
			v("keys/cacert.pem"),
			v("merlin-xmldsig-twenty-three/certs/ca.pem"),
			v("phaos-xmldsig-three/certs/rsa-ca-cert.der"),
		},
		IntermediateFiles: []string{v("keys/ca2cert.pem")},
		// The certificates xmlsec1 is given with --untrusted-*: indexed for
		// X509IssuerSerial and X509SKI lookups, trusted only through a CA.
		KnownCertFiles: []string{
			v("keys/rsa/rsa-2048-cert.pem"),
			v("keys/rsa/rsa-4096-cert.pem"),
			v("phaos-xmldsig-three/certs/rsa-cert.der"),
		},
	}
	keys := []struct{ p12, secret string }{
		{"keys/rsa/rsa-4096-key.p12", "secret123"},
		{"keys/rsa/rsa-2048-key.p12", "secret123"},
		{"xmlenc11-interop-2012/RSA-2048_SHA256WithRSA.p12", "passwd"},
		{"xmlenc11-interop-2012/RSA-3072_SHA256WithRSA.p12", "passwd"},
		{"xmlenc11-interop-2012/RSA-4096_SHA256WithRSA.p12", "passwd"},
		{"01-phaos-xmlenc-3/rsa-priv-key.p12", "secret"},
	}
	for i, k := range keys {
		f, err := pw(fmt.Sprintf("pw%d", i), k.secret)
		if err != nil {
			return conformancePolicies{}, err
		}
		p.DecryptionKeys = append(p.DecryptionKeys, config.KeyFiles{PKCS12File: v(k.p12), PasswordFile: f})
	}
	def, err := wss.Compile("xmlsec", p, nil, reload.Options{})
	if err != nil {
		return conformancePolicies{}, err
	}
	p.Algorithms.Legacy = config.Legacy{SHA1: true, CBC: true, RSA15: true, InclusiveC14N: true}
	legacy, err := wss.Compile("xmlsec-legacy", p, nil, reload.Options{})
	if err != nil {
		return conformancePolicies{}, err
	}
	return conformancePolicies{def: def, legacy: legacy}, nil
}

// run returns the outcome of one vector file under p, and for an accepted
// encryption vector the plaintext document.
func run(e *Engine, kind string, data []byte, p *wss.Policy) (string, wss.Reason, []byte, error) {
	var (
		out []byte
		err error
	)
	switch kind {
	case "dsig":
		var res *wss.Result
		if res, err = e.VerifyDocument(data, p, conformanceNow); err == nil && len(res.Signatures) == 0 {
			err = fmt.Errorf("accepted without a verified signature")
		}
	case "enc":
		out, err = e.DecryptDocument(data, p, conformanceNow)
	default:
		err = fmt.Errorf("unknown kind %q", kind)
	}
	if err != nil {
		return reject, reasonOf(err), nil, err
	}
	return accept, 0, out, nil
}

// vectorFiles returns the files a MANIFEST row stands for, with xmlsec's
// expectation for each: one file, or every NIST AES-GCM file for the
// template rows.
func vectorFiles(t *testing.T, r manifestRow) map[string]string {
	t.Helper()
	if r.vector != nistTemplate {
		return map[string]string{r.vector: r.expected}
	}
	files, err := filepath.Glob(filepath.Join(xmlsecDir, "nist-aesgcm", "aes*", "*.xml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]string{}
	for _, f := range files {
		base := strings.TrimSuffix(f, ".xml")
		_, err := os.Stat(base + ".data")
		want := "fail"
		if err == nil {
			want = "success"
		}
		if want == r.expected {
			rel, err := filepath.Rel(xmlsecDir, base)
			require.NoError(t, err)
			out[filepath.ToSlash(rel)] = want
		}
	}
	return out
}

// xmlsecAgrees reports whether wssgw's outcome is the one xmlsec expects.
func xmlsecAgrees(outcome, expected string) bool {
	return (outcome == accept) == (expected == "success")
}

func TestXMLSecConformance(t *testing.T) {
	rows := readManifest(t)
	e := newEngine(t)
	pol := loadConformancePolicies(t)

	type tally struct{ rows, agree int }
	var (
		mu      sync.Mutex
		counts  = map[string]*tally{} // "accept" or "reject/<reason>"
		differ  = map[string]int{}    // why → rows
		absents int
	)
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.vector] = true
		name := fmt.Sprintf("%s/%s/L%d", r.kind, r.vector, r.line)
		exp, ok := wssgwExpect[r.vector]
		if exp.outcome == accept {
			name = "ok/" + name
		} else {
			name = "fail/" + name
		}
		t.Run(name, func(t *testing.T) {
			require.True(t, ok, "vector %s missing from wssgwExpect", r.vector)
			if exp.outcome == absent {
				_, err := os.Stat(filepath.Join(xmlsecDir, r.vector+".xml"))
				require.True(t, os.IsNotExist(err), "vector %s is shipped now: classify it", r.vector)
				mu.Lock()
				absents++
				mu.Unlock()
				return
			}
			require.Contains(t, []string{accept, reject}, exp.outcome)
			for vec, xmlsecWant := range vectorFiles(t, r) {
				data, err := os.ReadFile(filepath.Join(xmlsecDir, vec+".xml"))
				require.NoError(t, err)
				outcome, reason, plain, err := run(e, r.kind, data, pol.def)
				require.Equal(t, exp.outcome, outcome, "%s: %v", vec, err)
				require.Equal(t, exp.reason, reason, "%s: %v", vec, err)
				agree := xmlsecAgrees(outcome, xmlsecWant)
				if !agree {
					assert.NotEmpty(t, exp.why, "%s: wssgw %s, xmlsec %s: say why", vec, outcome, xmlsecWant)
				}
				if outcome == accept && r.kind == "enc" {
					if want, err := os.ReadFile(filepath.Join(xmlsecDir, vec+".data")); err == nil {
						assert.Equal(t, string(want), string(plain), "%s: plaintext", vec)
					}
				}
				if reason == wss.ReasonAlgorithm {
					require.NotNil(t, exp.legacy, "%s: state the outcome under legacy opt-in", vec)
					lo, lr, lplain, lerr := run(e, r.kind, data, pol.legacy)
					assert.Equal(t, exp.legacy.outcome, lo, "%s legacy: %v", vec, lerr)
					assert.Equal(t, exp.legacy.reason, lr, "%s legacy: %v", vec, lerr)
					if lo == accept && r.kind == "enc" {
						want, err := os.ReadFile(filepath.Join(xmlsecDir, vec+".data"))
						require.NoError(t, err)
						assert.Equal(t, string(want), string(lplain), "%s: legacy plaintext", vec)
					}
				} else {
					assert.Nil(t, exp.legacy, "%s: legacy outcome only for algorithm rejections", vec)
				}
				key := accept
				if outcome == reject {
					key = "reject/" + reason.String()
				}
				mu.Lock()
				if counts[key] == nil {
					counts[key] = &tally{}
				}
				counts[key].rows++
				if agree {
					counts[key].agree++
				} else {
					differ[exp.why]++
				}
				mu.Unlock()
			}
		})
	}
	t.Run("fail/table-has-no-stale-entries", func(t *testing.T) {
		for v := range wssgwExpect {
			assert.True(t, seen[v], "wssgwExpect lists %s, which MANIFEST.tsv does not", v)
		}
	})

	keys := make([]string, 0, len(counts))
	total, agree := 0, 0
	for k, c := range counts {
		keys = append(keys, k)
		total += c.rows
		agree += c.agree
	}
	sort.Strings(keys)
	var b bytes.Buffer
	fmt.Fprintf(&b, "xmlsec conformance: %d vector runs (%d MANIFEST rows, %d absent), %d agree with xmlsec, %d differ\n",
		total, len(rows), absents, agree, total-agree)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-22s %4d (agree %d)\n", k, counts[k].rows, counts[k].agree)
	}
	whys := make([]string, 0, len(differ))
	for w := range differ {
		whys = append(whys, w)
	}
	sort.Slice(whys, func(i, j int) bool {
		return differ[whys[i]] > differ[whys[j]] || differ[whys[i]] == differ[whys[j]] && whys[i] < whys[j]
	})
	for _, w := range whys {
		fmt.Fprintf(&b, "  differs %4d: %s\n", differ[w], w)
	}
	t.Log(b.String())
}

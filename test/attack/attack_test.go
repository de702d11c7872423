package attack

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testvectors"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

var vectorNames = []string{"sign-bst", "sign-issuerserial", "signencr-gcm", "sign-bst-soap12"}

// loadVector reads the first message of a WSS4J vector (testdata/wss4j,
// see internal/testvectors).
func loadVector(t *testing.T, name string) []byte {
	t.Helper()
	return testvectors.Read(t, "wss4j/"+name+"/0000.xml")
}

// vectorCreated returns the wsu:Created of a vector.
func vectorCreated(t *testing.T, data []byte) time.Time {
	t.Helper()
	m, err := parse(data)
	require.NoError(t, err)
	require.GreaterOrEqual(t, m.created, 0)
	c, err := time.Parse(time.RFC3339Nano, m.text(m.created))
	require.NoError(t, err)
	return c
}

// dump writes the mutants under $ATTACK_DUMP/<vector>/ when set.
func dump(t *testing.T, vector string, ms []Mutant) {
	t.Helper()
	dir := os.Getenv("ATTACK_DUMP")
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, vector)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, m := range ms {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fileName(m.Name)), m.Data, 0o644))
	}
}

func fileName(name string) string { return strings.ReplaceAll(name, "/", "__") + ".xml" }

// gateAccepted lists mutants of the parse and bomb families that wssgw's
// byte-level gate (xmlscan, default limits) is not expected to reject,
// because a later stage does.
var gateAccepted = map[string]string{
	"bomb/prefixlist-10000": "the PrefixList is one attribute value under 64 KiB; c14n.MaxPrefixes rejects it",
}

func TestMutateVectors(t *testing.T) {
	for _, v := range vectorNames {
		t.Run(v, func(t *testing.T) {
			data := loadVector(t, v)
			orig := append([]byte(nil), data...)
			resigner, err := SelfIssuedResigner(func() time.Time { return vectorCreated(t, data) })
			require.NoError(t, err)
			ms, err := MutateWithResigner(data, resigner)
			require.NoError(t, err)
			require.Equal(t, orig, data, "Mutate must not modify its input")
			dump(t, v, ms)

			families := map[string]bool{}
			for _, f := range Families() {
				families[f] = true
			}
			names := map[string]bool{}
			count := map[string]int{}
			for _, m := range ms {
				assert.False(t, names[m.Name], "duplicate name %s", m.Name)
				names[m.Name] = true
				assert.True(t, families[m.Family], "%s: unknown family %q", m.Name, m.Family)
				assert.False(t, bytes.Equal(m.Data, data), "%s equals the input", m.Name)
				assert.NotEmpty(t, m.Data, m.Name)
				count[m.Family]++
			}
			for _, f := range Families() {
				assert.Positive(t, count[f], "family %s not represented", f)
			}
			for _, n := range []string{
				"wrap/body-in-header-wrapper/atk-no-id", "wrap/body-in-security-wrapper/atk-same-id",
				"wrap/body-in-attacker-body-wrapper/atk-changed-id", "wrap/second-body-after/atk-unqualified-id",
				"wrap/timestamp-in-header-wrapper/atk-same-id", "wrap/second-security-header-copy",
				"wrap/signature-in-header-wrapper", "ref/dangling-extra", "ref/timestamp-ref-removed",
				"alg/rsa-sha1", "alg/sha1-digest", "alg/md5-digest", "alg/c14n-inclusive", "alg/transform-xslt",
				"hmac/hmac-sha1-outputlength-0", "hmac/outputlength-160-in-original-method",
				"key/resigned-self-issued", "value/comment-in-digestvalue-0", "value/cdata-in-signaturevalue",
				"tamper/flip-signaturevalue", "parse/doctype-xxe-file", "parse/billion-laughs",
				"ns/wsu-rebound-on-body", "bomb/depth-10000", "bomb/base64-16mib-bst", "struct/no-timestamp",
			} {
				assert.True(t, names[n], "mutant %s missing", n)
			}
			if v == "sign-bst" || v == "sign-bst-soap12" || v == "signencr-gcm" {
				assert.True(t, names["alg/hmac-sha256-keyed-with-spki"], "key-confusion mutant missing")
				assert.True(t, names["key/resigned-trusted-bst-swapped-in"])
			}
			if v == "signencr-gcm" {
				for _, n := range []string{"struct/encrypteddata-0-moved-to-header", "struct/encrypteddata-0-type-flipped",
					"tamper/flip-ciphervalue-1", "value/comment-in-ciphervalue-0", "alg/encrypteddata-aes256-cbc-0"} {
					assert.True(t, names[n], "mutant %s missing", n)
				}
			}

			// Parser-level and resource mutants must die at the gate.
			var d xmlscan.Document
			for _, m := range ms {
				if (m.Family == FamilyParse || m.Family == FamilyBomb) && gateAccepted[m.Name] == "" {
					assert.Error(t, xmlscan.Scan(m.Data, &d), "%s passes the gate", m.Name)
				}
				// Comments and CDATA in the Security header die at the gate too.
				if m.Family == FamilyValue && (strings.HasPrefix(m.Name, "value/comment-in-") || strings.HasPrefix(m.Name, "value/cdata-in-")) &&
					!strings.HasSuffix(m.Name, "body-text") && m.Name != "value/comment-in-body" && !strings.HasSuffix(m.Name, "ciphervalue-1") {
					if v != "signencr-gcm" || !strings.Contains(m.Name, "ciphervalue") {
						assert.Error(t, xmlscan.Scan(m.Data, &d), "%s passes the gate", m.Name)
					}
				}
			}
			var fs []string
			for f, n := range count {
				fs = append(fs, f+"="+itoa(n))
			}
			sort.Strings(fs)
			t.Logf("%s: %d mutants: %s", v, len(ms), strings.Join(fs, " "))
		})
	}
}

func TestMutateDeterministicNames(t *testing.T) {
	data := loadVector(t, "sign-bst")
	a, err := Mutate(data)
	require.NoError(t, err)
	b, err := Mutate(data)
	require.NoError(t, err)
	require.Equal(t, len(a), len(b))
	for i := range a {
		assert.Equal(t, a[i].Name, b[i].Name)
	}
}

func TestWrappingKeepsSignedBodyBytes(t *testing.T) {
	// The moved copy must be the signed Body, unchanged except for added
	// namespace declarations, so that the digest still matches: a wrapping
	// mutant whose copy is broken would be rejected for the wrong reason.
	data := loadVector(t, "sign-bst")
	m, err := parse(data)
	require.NoError(t, err)
	ms, err := Mutate(data)
	require.NoError(t, err)
	inner := string(data[m.el(m.body).StartEnd:m.el(m.body).End])
	for _, mu := range ms {
		if !strings.HasPrefix(mu.Name, "wrap/body-in-") {
			continue
		}
		assert.Contains(t, string(mu.Data), inner, mu.Name)
		x, err := parse(mu.Data)
		require.NoError(t, err, mu.Name)
		assert.NotContains(t, x.text(x.bodyTextOrZero()), "Widget 0", mu.Name)
	}
}

// bodyTextOrZero is bodyText for tests, never -1.
func (m *msg) bodyTextOrZero() int {
	if t := m.bodyText(); t >= 0 {
		return t
	}
	return m.body
}

func TestReplays(t *testing.T) {
	data := loadVector(t, "sign-bst")
	rs, err := Replays(data)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(rs), 4)
	assert.Equal(t, data, rs[0].Data)
	var d xmlscan.Document
	for _, r := range rs {
		assert.Equal(t, FamilyReplay, r.Family)
		require.NoError(t, xmlscan.Scan(r.Data, &d), r.Name)
	}
}

func TestMutateRejectsUnsecured(t *testing.T) {
	_, err := Mutate([]byte(`<s:Envelope xmlns:s="` + NSSOAP11 + `"><s:Header/><s:Body/></s:Envelope>`))
	require.ErrorIs(t, err, ErrNotSecured)
	_, err = Mutate([]byte(`<a/>`))
	require.ErrorIs(t, err, ErrNotSecured)
	_, err = Mutate([]byte(`<!DOCTYPE a><a/>`))
	require.Error(t, err)
}

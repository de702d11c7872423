package c14n

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testvectors"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// readVector reads a vector file ("wss4j/...", "xmlsec/..."), skipping the
// test when its set is absent (internal/testvectors).
func readVector(t testing.TB, rel string) []byte {
	t.Helper()
	return testvectors.Read(t, rel)
}

// scan gates data with a config that allows comments everywhere (the
// vectors carry comments in signed parts on purpose).
func scan(t testing.TB, data []byte) *xmlscan.Document {
	t.Helper()
	sc, err := xmlscan.NewScanner(xmlscan.Config{})
	require.NoError(t, err)
	d := new(xmlscan.Document)
	require.NoError(t, sc.Scan(data, d))
	return d
}

// find returns the index of the n-th (from 0) element {space}local.
func find(d *xmlscan.Document, space, local string, n int) int {
	for i := range d.Elements {
		if e := &d.Elements[i]; e.Space == space && e.Local == local {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// findID returns the element whose attribute of local name "Id" (in any
// namespace or none) has value id.
func findID(d *xmlscan.Document, id string) int {
	for i := range d.Elements {
		for j, a := range d.AttrsOf(i) {
			if a.Local == "Id" && string(d.AttrValue(d.Elements[i].Attrs.Start+j, nil)) == id {
				return i
			}
		}
	}
	return -1
}

// childText returns the text of the first descendant {space}local of
// element i.
func childText(d *xmlscan.Document, i int, space, local string) string {
	for k := i + 1; k < d.Elements[i].Next; k++ {
		if e := &d.Elements[k]; e.Space == space && e.Local == local {
			return string(d.Text(k, nil))
		}
	}
	return ""
}

// attr returns the normalized value of element i's unqualified attribute.
func attr(d *xmlscan.Document, i int, local string) string {
	j := d.FindAttr(i, "", local)
	if j < 0 {
		return ""
	}
	return string(d.AttrValue(j, nil))
}

// xmlsec1 finds the xmlsec1 peer. CI installs it (.ci/run), so there a
// missing binary is a failure, not a skip that would hide the cross-check.
func xmlsec1(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("xmlsec1")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xmlsec1 not installed; .ci/run must install it")
		}
		t.Skip("xmlsec1 not installed")
	}
	return bin
}

package soap

import (
	"bytes"
	"encoding/xml"
	"testing"
)

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"text/xml; charset=utf-8", "application/soap+xml", `multipart/related; type="application/xop+xml"; start-info="application/soap+xml"`, "", ";;;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		kind, v := Classify(ct)
		if kind > Multipart || v > V12 {
			t.Fatalf("Classify(%q) = %d, %d", ct, kind, v)
		}
	})
}

// FuzzFault: whatever the reason and correlation id, the fault is
// well-formed XML that reads back the same text.
func FuzzFault(f *testing.F) {
	f.Add("Request body too large", "abc", false)
	f.Add(`<x a="&amp;">]]>`, `"'`, true)
	f.Fuzz(func(t *testing.T, reason, id string, v12 bool) {
		if !validXMLText(reason) || !validXMLText(id) {
			t.Skip("not representable in XML 1.0")
		}
		v := V11
		if v12 {
			v = V12
		}
		b := Fault{Code: Receiver, Reason: reason, CorrelationID: id}.Append(nil, v)
		d := xml.NewDecoder(bytes.NewReader(b))
		d.Strict = true
		var text bytes.Buffer
		for {
			tok, err := d.Token()
			if err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("fault is not well-formed: %v\n%s", err, b)
				}
				break
			}
			if cd, ok := tok.(xml.CharData); ok {
				text.Write(cd)
			}
		}
		if !bytes.Contains(text.Bytes(), []byte(reason)) {
			t.Fatalf("reason %q not read back from %s", reason, b)
		}
	})
}

// validXMLText excludes what XML 1.0 §2.2 cannot carry, and the CR that a
// parser normalizes (§2.11): the gateway's reasons are fixed strings anyway.
func validXMLText(s string) bool {
	for _, r := range s {
		if r == '\r' || r == 0xFFFD || (r < 0x20 && r != '\t' && r != '\n') || (r >= 0xD800 && r <= 0xDFFF) || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return true
}

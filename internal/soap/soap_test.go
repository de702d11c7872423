package soap

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestClassify(t *testing.T) {
	tests := map[string]struct {
		ct      string
		kind    Kind
		version Version
	}{
		"ok/soap11":            {"text/xml; charset=utf-8", Envelope, V11},
		"ok/soap11-bare":       {"text/xml", Envelope, V11},
		"ok/soap11-case":       {"Text/XML ; charset=UTF-8", Envelope, V11},
		"ok/soap12":            {`application/soap+xml; charset=utf-8; action="urn:a"`, Envelope, V12},
		"ok/mtom-soap12":       {`multipart/related; type="application/xop+xml"; start="<root>"; start-info="application/soap+xml"; boundary=b`, Multipart, V12},
		"ok/mtom-soap11":       {`multipart/related; type="application/xop+xml"; start-info="text/xml"; boundary=b`, Multipart, V11},
		"ok/swa-soap12":        {`multipart/related; type="application/soap+xml"; boundary=b`, Multipart, V12},
		"ok/swa-soap11":        {`multipart/related; type="text/xml"; boundary=b`, Multipart, V11},
		"ok/multipart-garbled": {`multipart/related; type=`, Multipart, V11},
		"fail/empty":           {"", Unsupported, V11},
		"fail/json":            {"application/json", Unsupported, V11},
		"fail/xml":             {"application/xml", Unsupported, V11},
		"fail/prefix":          {"text/xmlx", Unsupported, V11},
		"fail/soap12-guess":    {"application/soap+xml-ish", Unsupported, V12},
		"fail/form":            {"multipart/form-data; boundary=b", Unsupported, V11},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			kind, v := Classify(tc.ct)
			assert.Equal(t, tc.kind, kind)
			assert.Equal(t, tc.version, v)
		})
	}
}

func TestFaultGolden(t *testing.T) {
	wsse := &QName{Prefix: "wsse", Local: "InvalidSecurity", Space: "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"}
	tests := map[string]struct {
		fault Fault
		v     Version
	}{
		"sender11":   {Fault{Code: Sender, Reason: "Request body too large", CorrelationID: "abc123"}, V11},
		"receiver12": {Fault{Code: Receiver, Reason: "Backend service timed out", CorrelationID: "abc123"}, V12},
		"subcode11":  {Fault{Code: Sender, Subcode: wsse, Reason: "An error was discovered processing the <wsse:Security> header"}, V11},
		"subcode12":  {Fault{Code: Sender, Subcode: wsse, Reason: "An error was discovered processing the <wsse:Security> header", CorrelationID: "x"}, V12},
		"escaping11": {Fault{Code: Sender, Reason: `<script>&"'`, CorrelationID: `"><x/>`}, V11},
		"version11":  {Fault{Code: VersionMismatch, Reason: "SOAP version mismatch", CorrelationID: "abc123"}, V11},
		"version12":  {Fault{Code: VersionMismatch, Reason: "SOAP version mismatch", CorrelationID: "abc123"}, V12},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, tc.fault.Write(&buf, tc.v))
			golden := filepath.Join("testdata", name+".xml")
			if *update {
				require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), buf.String())
			checkFault(t, buf.Bytes(), tc.fault, tc.v)
		})
	}
}

// checkFault parses a written fault back and compares what a client reads.
func checkFault(t *testing.T, b []byte, f Fault, v Version) {
	var env struct {
		XMLName xml.Name
		Fault   struct {
			Code11   string `xml:"faultcode"`
			String11 string `xml:"faultstring"`
			Code12   string `xml:"Code>Value"`
			Sub12    string `xml:"Code>Subcode>Value"`
			Text12   string `xml:"Reason>Text"`
			ID11     string `xml:"detail>correlationId"`
			ID12     string `xml:"Detail>correlationId"`
		} `xml:"Body>Fault"`
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	require.NoError(t, d.Decode(&env))
	fl := env.Fault
	if v == V12 {
		assert.Equal(t, NS12, env.XMLName.Space)
		assert.Equal(t, f.Reason, fl.Text12)
		assert.Equal(t, f.CorrelationID, fl.ID12)
		assert.Equal(t, "env:"+f.Code.codeName(V12), fl.Code12)
		if f.Subcode != nil {
			assert.Equal(t, "wsse:"+f.Subcode.Local, fl.Sub12)
		}
		return
	}
	assert.Equal(t, NS11, env.XMLName.Space)
	assert.Equal(t, f.Reason, fl.String11)
	assert.Equal(t, f.CorrelationID, fl.ID11)
	if f.Subcode != nil {
		assert.Equal(t, "wsse:"+f.Subcode.Local, fl.Code11)
	} else {
		assert.Equal(t, "soap:"+f.Code.codeName(V11), fl.Code11)
	}
}

func TestFaultCodes(t *testing.T) {
	for _, tc := range []struct {
		code     Code
		v11, v12 string
	}{
		{Sender, "soap:Client", "env:Sender"},
		{Receiver, "soap:Server", "env:Receiver"},
		{VersionMismatch, "soap:VersionMismatch", "env:VersionMismatch"},
	} {
		f := Fault{Code: tc.code, Reason: "r"}
		assert.Contains(t, string(f.Append(nil, V11)), "<faultcode>"+tc.v11+"</faultcode>")
		assert.Contains(t, string(f.Append(nil, V12)), "<env:Value>"+tc.v12+"</env:Value>")
	}
	// Only a SOAP 1.2 VersionMismatch fault carries the Upgrade header.
	assert.Contains(t, string(Fault{Code: VersionMismatch}.Append(nil, V12)), "<env:Upgrade>")
	assert.NotContains(t, string(Fault{Code: Sender}.Append(nil, V12)), "<env:Upgrade>")
}

func BenchmarkFaultAppend(b *testing.B) {
	f := Fault{Code: Sender, Reason: "Request body too large", CorrelationID: "0123456789abcdef0123456789abcdef"}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = f.Append(buf[:0], V12)
	}
}

func BenchmarkClassify(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Classify("text/xml; charset=utf-8")
	}
}

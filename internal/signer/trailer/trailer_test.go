package trailer

import (
	"bytes"
	"context"
	gocrypto "crypto"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testmime"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// streamed signs the package as the gateway's streaming mode does, with
// the signature encrypted for recipient in the strict variant.
func streamed(t *testing.T, signing, recipient *testpki.Leaf) *mime.Package {
	t.Helper()
	in, boundary := testmime.File(t, strings.Repeat("\x00\x01binary", 100))
	o := signer.StreamOptions{Options: signer.DefaultOptions()}
	o.Signer, o.Certificate = signing.Key, signing.Cert
	if recipient != nil {
		o.StrictXOP, o.EncryptFor = true, recipient.Cert
	}
	s, err := signer.NewStream(o)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, s.Sign(&out, &testmime.RawParts{R: multipart.NewReader(in, boundary)}))
	return read(t, out.Bytes(), testmime.ContentType(s.Boundary()))
}

func read(t *testing.T, msg []byte, ct string) *mime.Package {
	t.Helper()
	lim := mime.DefaultLimits()
	lim.SpoolDir = t.TempDir()
	pkg, err := mime.Read(context.Background(), bytes.NewReader(msg), ct, lim)
	require.NoError(t, err)
	t.Cleanup(func() { pkg.Close() })
	return pkg
}

func TestReassemble(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "trailer CA")
	signing := ca.Issue(t, dir, "responder")
	requester := ca.IssueRSA(t, dir, "requester")
	other := ca.IssueRSA(t, dir, "other")
	unsigned, boundary := testmime.File(t, strings.Repeat("\x00\x01binary", 100))

	tests := []struct {
		name      string
		pkg       *mime.Package
		key       gocrypto.Decrypter
		trailer   bool  // the root gets a ds:Signature back from the last part
		want      error // nil for success
		wantInErr string
	}{
		{name: "ok/no-trailer", pkg: read(t, unsigned.Bytes(), testmime.ContentType(boundary))},
		{name: "ok/plain", pkg: streamed(t, signing, nil), trailer: true},
		{name: "ok/strict", pkg: streamed(t, signing, requester), key: requester.Key.(gocrypto.Decrypter), trailer: true},
		{name: "fail/strict-without-key", pkg: streamed(t, signing, requester), want: ErrNeedKey},
		{name: "fail/strict-wrong-key", pkg: streamed(t, signing, requester), key: other.Key.(gocrypto.Decrypter), wantInErr: "unwrap the key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, cid, err := Reassemble(tc.pkg, tc.key)
			switch {
			case tc.want != nil:
				require.ErrorIs(t, err, tc.want)
				return
			case tc.wantInErr != "":
				require.ErrorContains(t, err, tc.wantInErr)
				return
			}
			require.NoError(t, err)
			if !tc.trailer {
				assert.Empty(t, cid)
				assert.Equal(t, tc.pkg.RootBytes, out, "a package without a trailer keeps its root")
				return
			}
			last := tc.pkg.Attachments[len(tc.pkg.Attachments)-1]
			assert.Equal(t, last.ContentID(), cid, "the trailer is the last part")
			var d xmlscan.Document
			require.NoError(t, xmlscan.Scan(out, &d))
			inc, _ := trailingInclude(&d)
			assert.Negative(t, inc, "no xop:Include stands for the signature any more")
			assert.Contains(t, string(out), "SignatureValue>")
			assert.NotContains(t, string(out), "EncryptedData", "the strict variant's EncryptedData and EncryptedKey are gone")
		})
	}
}

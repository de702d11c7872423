package dom

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/testmime"
	"github.com/wssgw/wssgw/internal/wss"
)

// The mtom-store-* vectors are what CXF sends with MTOM on (issue 15):
// WSS4J storeBytesInAttachment moved the BinarySecurityToken's certificate
// and every CipherValue into MIME parts, and one attachment (Content-ID
// photo<n>@example.org) in the Body is signed through the XOP infoset.
var mtomStoreSets = []string{"mtom-store-sign", "mtom-store-sign-soap12", "mtom-store-signencr", "mtom-store-signencr-soap12"}

// storeVector is one of those packages, read into memory.
type storeVector struct {
	root  string
	atts  *testmime.Parts
	photo string // the Body attachment's Content-ID
}

func readStoreVector(t testing.TB, set string, n int) *storeVector {
	t.Helper()
	needVectors(t)
	base := filepath.Join(vectorDir, set, fmt.Sprintf("%04d", n))
	ctype, err := os.ReadFile(base + ".ctype")
	require.NoError(t, err)
	f, err := os.Open(base + ".mime")
	require.NoError(t, err)
	defer f.Close()
	pkg, err := mime.Read(context.Background(), f, strings.TrimSpace(string(ctype)), mime.DefaultLimits())
	require.NoError(t, err)
	defer pkg.Close()
	atts, err := testmime.FromPackage(pkg)
	require.NoError(t, err)
	v := &storeVector{root: string(pkg.RootBytes), atts: atts, photo: fmt.Sprintf("photo%d@example.org", n)}
	return v
}

var (
	bstIncludeRE = regexp.MustCompile(`(<wsse:BinarySecurityToken [^>]*>)<xop:Include href="cid:([^"]+)"/>`)
	cvIncludeRE  = regexp.MustCompile(`<xenc:CipherValue [^>]*><xop:Include href="cid:([^"]+)"/>`)
)

// bstPart returns the Content-ID the BinarySecurityToken's xop:Include
// names.
func (v *storeVector) bstPart(t testing.TB) string {
	t.Helper()
	m := bstIncludeRE.FindStringSubmatch(v.root)
	require.NotNil(t, m, "no BinarySecurityToken with an xop:Include")
	return m[2]
}

func (v *storeVector) process(t testing.TB, e *Engine, p *wss.Policy) (*wss.Result, []byte, error) {
	t.Helper()
	return p.VerifyAttachments(context.Background(), e, []byte(v.root), v.atts, createdOf(t, []byte(v.root)).Add(time.Second))
}

func TestWSS4JStoreBytesInAttachment(t *testing.T) {
	e := newEngine(t)
	p := vectorPolicy(t, nil)
	for _, set := range mtomStoreSets {
		for n := range 2 {
			t.Run(fmt.Sprintf("ok/%s/%04d", set, n), func(t *testing.T) {
				v := readStoreVector(t, set, n)
				bst := v.bstPart(t)
				res, fwd, err := v.process(t, e, p)
				require.NoError(t, err)
				require.Len(t, res.Signatures, 1)
				assert.Contains(t, res.Signatures[0].Signer.Subject, "CN=client")
				assert.Equal(t, "bst", res.Signatures[0].KeyReference)
				assert.NotContains(t, string(fwd), "Security")
				assert.NotContains(t, string(fwd), "EncryptedData")
				// Every part but the photo held a header value (the
				// certificate, CipherValues): consumed, never forwarded.
				want := []string{}
				for _, id := range v.atts.Order {
					if id != v.photo {
						want = append(want, id)
					}
				}
				assert.ElementsMatch(t, want, res.Consumed)
				assert.Contains(t, res.Consumed, bst)
				assert.Contains(t, string(fwd), `href="cid:`+v.photo+`"`, "the Body's xop:Include goes on")
				for _, f := range res.Attachments {
					if f.CID == v.photo {
						assert.True(t, res.AttachmentSignedByTrusted(&f), "photo signed")
						assert.False(t, f.Consumed)
					}
				}
				if strings.Contains(set, "signencr") {
					require.Len(t, res.Decrypted, 1)
					assert.Len(t, cvIncludeRE.FindAllString(v.root, -1), 2, "EncryptedKey and EncryptedData CipherValues in parts")
				}
			})
		}
	}
}

// TestWSS4JStoreBytesAttacks tampers with the parts and breaks the XOP
// rules (W3C XOP 1.0 §3; mime.CheckInclude) on a sign+encrypt vector.
func TestWSS4JStoreBytesAttacks(t *testing.T) {
	e := newEngine(t)
	p := vectorPolicy(t, nil)
	for _, set := range []string{"mtom-store-sign", "mtom-store-signencr-soap12"} {
		tests := []struct {
			name   string
			mutate func(t *testing.T, v *storeVector)
			reason wss.Reason
		}{
			{"fail/tampered attachment", func(t *testing.T, v *storeVector) {
				flip(v.atts.ByID[v.photo].Data, 100)
			}, wss.ReasonDigest},
			{"fail/tampered BST part", func(t *testing.T, v *storeVector) {
				// Inside the certificate's signature: still parses, no longer
				// chains to the CA.
				d := v.atts.ByID[v.bstPart(t)].Data
				flip(d, len(d)-10)
			}, wss.ReasonUntrusted},
			{"fail/BST part over the token bound", func(t *testing.T, v *storeVector) {
				v.atts.ByID[v.bstPart(t)].Data = make([]byte, wss.MaxTokenPart+1)
			}, wss.ReasonToken},
			{"fail/BST part not a certificate", func(t *testing.T, v *storeVector) {
				v.atts.ByID[v.bstPart(t)].Data = []byte("not DER")
			}, wss.ReasonToken},
			{"fail/BST part is another client's certificate", func(t *testing.T, v *storeVector) {
				// The server's certificate chains to the same CA; the
				// signature was made by the client's key.
				der := pemDER(t, filepath.Join(vectorDir, "keys", "server.crt"))
				v.atts.ByID[v.bstPart(t)].Data = der
			}, wss.ReasonSignature},
			{"fail/two includes in the BST", func(t *testing.T, v *storeVector) {
				v.root = bstIncludeRE.ReplaceAllString(v.root, `$1<xop:Include href="cid:$2"/><xop:Include href="cid:$2"/>`)
			}, wss.ReasonMalformed},
			{"fail/BST include and text", func(t *testing.T, v *storeVector) {
				v.root = bstIncludeRE.ReplaceAllString(v.root, `${1}MIIB<xop:Include href="cid:$2"/>`)
			}, wss.ReasonStructure},
			{"fail/non-cid href", func(t *testing.T, v *storeVector) {
				v.root = bstIncludeRE.ReplaceAllString(v.root, `$1<xop:Include href="http://example.org/$2"/>`)
			}, wss.ReasonReference},
			{"fail/missing part", func(t *testing.T, v *storeVector) {
				bst := v.bstPart(t)
				delete(v.atts.ByID, bst)
				v.atts.Order = without(v.atts.Order, bst)
			}, wss.ReasonReference},
			{"fail/BST names the photo, included twice", func(t *testing.T, v *storeVector) {
				v.root = bstIncludeRE.ReplaceAllString(v.root, `$1<xop:Include href="cid:`+v.photo+`"/>`)
			}, wss.ReasonReference},
			{"fail/Body names the BST part too", func(t *testing.T, v *storeVector) {
				if !strings.Contains(v.root, `href="cid:`+v.photo+`"`) {
					t.Skip("the Body is encrypted")
				}
				v.root = strings.Replace(v.root, `href="cid:`+v.photo+`"`, `href="cid:`+v.bstPart(t)+`"`, 1)
			}, wss.ReasonReference},
			{"fail/a CipherValue names the BST part", func(t *testing.T, v *storeVector) {
				m := cvIncludeRE.FindAllStringSubmatch(v.root, -1)
				if len(m) == 0 {
					t.Skip("nothing encrypted")
				}
				v.root = strings.Replace(v.root, `href="cid:`+m[len(m)-1][1]+`"`, `href="cid:`+v.bstPart(t)+`"`, 1)
			}, wss.ReasonReference},
			{"fail/include in a KeyIdentifier", func(t *testing.T, v *storeVector) {
				// WSS4J expands xop:Include in BinarySecurityToken and
				// CipherValue only.
				v.root = bstIncludeRE.ReplaceAllStringFunc(v.root, func(s string) string {
					return strings.Replace(s, "<xop:Include", `<wsse:KeyIdentifier xmlns:xop="http://www.w3.org/2004/08/xop/include"><xop:Include`, 1)
				})
				v.root = strings.Replace(v.root, `"/></wsse:BinarySecurityToken>`, `"/></wsse:KeyIdentifier></wsse:BinarySecurityToken>`, 1)
			}, wss.ReasonMalformed},
		}
		for _, tt := range tests {
			t.Run(tt.name+"/"+set, func(t *testing.T) {
				v := readStoreVector(t, set, 0)
				tt.mutate(t, v)
				_, _, err := v.process(t, e, p)
				require.Error(t, err)
				assert.Equal(t, tt.reason, reasonOf(err), "%v", err)
			})
		}
	}
}

func flip(b []byte, i int) { b[i] ^= 0x01 }

func without(ids []string, id string) []string {
	var out []string
	for _, v := range ids {
		if v != id {
			out = append(out, v)
		}
	}
	return out
}

func pemDER(t testing.TB, file string) []byte {
	t.Helper()
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	i, j := bytes.Index(raw, []byte("-----\n")), bytes.LastIndex(raw, []byte("\n-----END"))
	require.True(t, i > 0 && j > i)
	der, err := b64(string(raw[i+6 : j]))
	require.NoError(t, err)
	return der
}

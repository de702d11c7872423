package e2e

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"maps"
	stdmime "mime"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpeer"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// The two attachments every package carries, with fixed Content-IDs so
// the tampering below can find them in the MIME bytes.
const (
	w4mBinCID = "bin.0@wssgw.test"
	w4mTxtCID = "txt.1@wssgw.test"
	// w4mTxtBody has CRLF line ends: WSS4J's Attachment-Content transform
	// normalises them for text/* (SwA 1.1 §5.4.1), so the DOM engine must
	// do the same to agree with it.
	w4mTxtBody = "first line\r\nsecond line\r\nthird line\r\n"
)

// w4mMode is one way WSS4J secures the package.
type w4mMode struct {
	name    string
	args    []string
	xop     bool // covered through xop:Include (XOP infoset digest)
	swa     bool // covered by a cid: Reference
	encrypt bool // the parts arrive encrypted (swa-encrypt)
	// complete: Attachment-Complete signature transform, which covers the
	// part's MIME headers.
	complete bool
	profile  string // the peer's profile; sign-bst when empty
	// consumed is how many parts hold Security header values (WSS4J
	// storeBytesInAttachment: the BST's certificate, CipherValues), which
	// the backend does not get.
	consumed int
}

// w4mTamper changes the MIME bytes of a package; want is the reason the
// DOM engine must reject the result with ("" = accepted).
type w4mTamper struct {
	name   string
	want   wss.Reason
	mutate func(t *testing.T, pkg []byte) []byte
	// retyped are media types the backend sees changed when accepted.
	retyped map[string]string
}

// TestWSS4JMTOMRequests: Apache WSS4J signs (and encrypts) MTOM and SwA
// packages — the Body over its XOP infoset, the attachments by SwA 1.1
// Attachment-Content and Attachment-Complete references, then the
// attachments encrypted for wssgw — and the DOM engine, reading the
// package with internal/mime, accepts each one with every attachment
// signed and decrypted to the original bytes, and rejects it once an
// attachment's content, or a header the signature covers, changed on the
// way.
func TestWSS4JMTOMRequests(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	pki := newPartnerPKI(t)

	bin := make([]byte, 4<<10)
	_, err := rand.Read(bin)
	require.NoError(t, err)
	originals := map[string][]byte{w4mBinCID: bin, w4mTxtCID: []byte(w4mTxtBody)}
	types := map[string]string{w4mBinCID: "application/octet-stream", w4mTxtCID: "text/plain"}
	binFile, txtFile := filepath.Join(pki.dir, "att.bin"), filepath.Join(pki.dir, "att.txt")
	require.NoError(t, os.WriteFile(binFile, bin, 0o600))
	require.NoError(t, os.WriteFile(txtFile, []byte(w4mTxtBody), 0o600))
	plain := filepath.Join(pki.dir, "mtom.plain.xml")
	require.NoError(t, os.WriteFile(plain, plainEnvelope(soap.NS11, payload(512)), 0o600))

	enc := []string{"--encrypt-cert", pki.server.CertFile}
	modes := []w4mMode{
		{name: "xop-expand", args: []string{"--xop-expand"}, xop: true},
		{name: "swa-content", args: []string{"--swa", "content"}, swa: true},
		{name: "swa-complete", args: []string{"--swa", "complete"}, swa: true, complete: true},
		{name: "swa-content-encrypted", args: append([]string{"--swa", "content", "--swa-encrypt", "content"}, enc...),
			swa: true, encrypt: true},
		{name: "swa-complete-encrypted", args: append([]string{"--swa", "complete", "--swa-encrypt", "complete"}, enc...),
			swa: true, encrypt: true, complete: true},
		// CXF with MTOM on (issue 15): the BST's certificate, and with
		// encryption the EncryptedKey's and the Body's CipherValues, in
		// parts.
		{name: "store-bytes", args: []string{"--xop-expand", "--store-bytes-in-attachment"}, xop: true, consumed: 1},
		// The BST itself signed: its digest is over the XOP infoset, the
		// certificate's base64 in place of the xop:Include.
		{name: "store-bytes-signed-bst", args: []string{"--xop-expand", "--store-bytes-in-attachment", "--include-bst-in-signature"},
			xop: true, consumed: 1},
		{name: "store-bytes-pkipath", args: []string{"--xop-expand", "--store-bytes-in-attachment", "--pkipath", "--chain", pki.ca},
			xop: true, consumed: 1},
		{name: "store-bytes-sign-encrypt", profile: "sign-encrypt", args: append([]string{"--xop-expand", "--store-bytes-in-attachment"}, enc...),
			xop: true, consumed: 3},
	}

	jobs := make([]testpeer.Job, 0, len(modes))
	files := map[string]string{}
	for _, m := range modes {
		out := filepath.Join(pki.dir, m.name+".mime")
		profile := m.profile
		if profile == "" {
			profile = "sign-bst"
		}
		args := []string{"sign", "--profile", profile, "--in", plain, "--mime-out", out,
			"--key", pki.client.KeyFile, "--cert", pki.client.CertFile,
			"--attachment", binFile, "--attachment-type", "application/octet-stream", "--content-id", w4mBinCID,
			"--attachment", txtFile, "--attachment-type", "text/plain", "--content-id", w4mTxtCID}
		jobs = append(jobs, testpeer.Job{ID: m.name, Args: append(args, m.args...)})
		files[m.name] = out
	}
	results := wss4jBatch(t, jar, jobs)

	policy := w4mPolicy(t, pki)
	engine, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)

	for _, m := range modes {
		// accepted checks what an accepted package brings the backend:
		// every part covered, with its original bytes and media type.
		accepted := func(t *testing.T, pkg *mime.Package, res *wss.Result, types map[string]string) {
			w4mRequireCovered(t, m, res)
			for cid, want := range originals {
				assert.Equal(t, want, w4mPartBytes(t, pkg, cid), "attachment <%s> reaches the backend as sent", cid)
				part, _ := pkg.Attachment(cid)
				got, _, err := stdmime.ParseMediaType(part.ContentType())
				require.NoError(t, err)
				assert.Equal(t, types[cid], got, "media type of <%s>", cid)
			}
		}
		r := results[m.name]
		require.True(t, r.OK, "WSS4J sign %s: %s", m.name, r.Error)
		require.NotEmpty(t, r.ContentType, m.name)
		msg, err := os.ReadFile(files[m.name])
		require.NoError(t, err)

		t.Run("ok/"+m.name, func(t *testing.T) {
			spool, err := w4mVerify(t, engine, policy, msg, r.ContentType, func(t *testing.T, pkg *mime.Package, res *wss.Result) {
				accepted(t, pkg, res, types)
			})
			require.NoError(t, err)
			w4mSpoolEmpty(t, spool)
		})

		for _, tc := range w4mTampers(m) {
			label := "fail/"
			if tc.want == 0 {
				label = "ok/"
			}
			t.Run(label+m.name+"/"+tc.name, func(t *testing.T) {
				data := tc.mutate(t, bytes.Clone(msg))
				require.NotEqual(t, msg, data, "the mutation changed nothing")
				var check func(*testing.T, *mime.Package, *wss.Result)
				if tc.want == 0 {
					check = func(t *testing.T, pkg *mime.Package, res *wss.Result) {
						seen := maps.Clone(types)
						maps.Copy(seen, tc.retyped)
						accepted(t, pkg, res, seen)
					}
				}
				spool, err := w4mVerify(t, engine, policy, data, r.ContentType, check)
				w4mSpoolEmpty(t, spool)
				if tc.want == 0 {
					require.NoError(t, err)
					return
				}
				require.Error(t, err, "a tampered package must be rejected")
				var we *wss.Error
				require.ErrorAs(t, err, &we)
				assert.Equal(t, tc.want, we.Reason, "%v", err)
			})
		}
	}
}

// w4mTampers are the changes each mode must notice (or, where SwA 1.1
// says the signature does not cover them, must not).
func w4mTampers(m w4mMode) []w4mTamper {
	// A flipped ciphertext byte fails AES-GCM's tag; a flipped plaintext
	// byte fails the digest.
	content := wss.ReasonDigest
	if m.encrypt {
		content = wss.ReasonDecrypt
	}
	ts := []w4mTamper{
		{name: "binary-content-flipped", want: content, mutate: w4mFlipByte(w4mBinCID)},
		{name: "text-content-flipped", want: content, mutate: w4mFlipByte(w4mTxtCID)},
	}
	if m.encrypt {
		// The outer Content-Type of an encrypted part is always
		// application/octet-stream and covered by nothing: the backend
		// gets the EncryptedData MimeType (Content-Only) or the encrypted
		// headers (Complete) instead (SwA 1.1 §5.5.2, §5.5.3).
		ts = append(ts, w4mTamper{name: "outer-content-type-ignored",
			mutate: w4mSetContentType(w4mTxtCID, "application/octet-stream", "text/html")})
	}
	switch {
	case m.complete && !m.encrypt:
		// Attachment-Complete covers Content-Type (SwA 1.1 §5.3.2).
		ts = append(ts, w4mTamper{name: "content-type-changed", want: wss.ReasonDigest,
			mutate: w4mSetContentType(w4mBinCID, "application/octet-stream", "application/x-other")})
	case m.swa && !m.encrypt:
		// Attachment-Content does not cover the headers (SwA 1.1 §5.3.1):
		// a different binary type changes nothing the digest saw.
		ts = append(ts, w4mTamper{name: "content-type-not-covered",
			mutate:  w4mSetContentType(w4mBinCID, "application/octet-stream", "application/x-other"),
			retyped: map[string]string{w4mBinCID: "application/x-other"}})
	}
	return ts
}

// w4mPolicy requires a trusted signature and a Timestamp (the default
// policy), decrypts with the server key, and has replay off: the same
// package is verified many times.
func w4mPolicy(t *testing.T, pki *partnerPKI) *wss.Policy {
	t.Helper()
	p := config.DefaultPolicy()
	p.Replay = "off"
	p.Trust.CAFiles = []string{pki.ca}
	p.DecryptionKeys = []config.KeyFiles{{CertFile: pki.server.CertFile, KeyFile: pki.server.KeyFile}}
	cp, err := wss.Compile("mtom", p, nil, reload.Options{})
	require.NoError(t, err)
	return cp
}

// w4mVerify reads data as a package spooling to a fresh directory
// (small threshold: the binary part goes to disk), verifies it, runs check
// on success while the package is open, and closes it. It returns the
// spool directory and the verification error.
func w4mVerify(t *testing.T, e *dom.Engine, p *wss.Policy, data []byte, ct string,
	check func(*testing.T, *mime.Package, *wss.Result)) (string, error) {
	t.Helper()
	spool := t.TempDir()
	lim := mime.DefaultLimits()
	lim.SpoolDir, lim.SpoolThreshold = spool, 1<<10
	pkg, err := mime.Read(t.Context(), bytes.NewReader(data), ct, lim)
	require.NoError(t, err)
	defer func() { require.NoError(t, pkg.Close()) }()
	entries, err := os.ReadDir(spool)
	require.NoError(t, err)
	require.NotEmpty(t, entries, "the binary attachment is spooled")

	res, _, err := p.VerifyAttachments(t.Context(), e, pkg.RootBytes, wss.PackageAttachments(pkg, ""), time.Now())
	if err != nil {
		return spool, fmt.Errorf("verify: %w", err)
	}
	if check != nil {
		check(t, pkg, res)
	}
	return spool, nil
}

// w4mRequireCovered: every attachment is referenced the way the mode says,
// covered by the trusted signature, and decrypted when it came encrypted.
func w4mRequireCovered(t *testing.T, m w4mMode, res *wss.Result) {
	t.Helper()
	require.Len(t, res.Attachments, 2+m.consumed)
	assert.Len(t, res.Consumed, m.consumed)
	for i := range res.Attachments {
		f := &res.Attachments[i]
		if f.CID != w4mBinCID && f.CID != w4mTxtCID {
			assert.True(t, f.Consumed, "<%s> holds a header value", f.CID)
			continue
		}
		assert.True(t, res.AttachmentSignedByTrusted(f), "<%s> signed", f.CID)
		assert.Equal(t, m.xop, f.XOP, "<%s> xop", f.CID)
		assert.Equal(t, m.swa, f.SwA, "<%s> swa", f.CID)
		assert.Equal(t, m.encrypt, f.Decrypted, "<%s> decrypted", f.CID)
		assert.False(t, f.Consumed, "<%s> consumed", f.CID)
	}
}

func w4mPartBytes(t *testing.T, pkg *mime.Package, cid string) []byte {
	t.Helper()
	part, ok := pkg.Attachment(cid)
	require.True(t, ok, cid)
	rc, err := part.Open()
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return b
}

func w4mSpoolEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "spool directory after Close")
}

// w4mPartStart is the offset of the content of the part with Content-ID cid.
func w4mPartStart(t *testing.T, pkg []byte, cid string) int {
	t.Helper()
	h := bytes.Index(pkg, []byte("Content-ID: <"+cid+">"))
	require.GreaterOrEqual(t, h, 0, cid)
	end := bytes.Index(pkg[h:], []byte("\r\n\r\n"))
	require.GreaterOrEqual(t, end, 0, cid)
	return h + end + 4
}

// w4mFlipByte flips the low bit of a byte a few bytes into the part's
// content (a letter of the text stays a letter).
func w4mFlipByte(cid string) func(*testing.T, []byte) []byte {
	return func(t *testing.T, pkg []byte) []byte {
		t.Helper()
		i := w4mPartStart(t, pkg, cid) + 3
		pkg[i] ^= 1
		return pkg
	}
}

// w4mSetContentType replaces the value old of the part's Content-Type header
// with new.
func w4mSetContentType(cid, old, new string) func(*testing.T, []byte) []byte {
	return func(t *testing.T, pkg []byte) []byte {
		t.Helper()
		start := w4mPartStart(t, pkg, cid)
		hdr := bytes.LastIndex(pkg[:start], []byte("\r\n--"))
		require.GreaterOrEqual(t, hdr, 0)
		block := string(pkg[hdr:start])
		line := "Content-Type: " + old + "\r\n"
		require.Contains(t, block, line, "header of <%s>", cid)
		block = strings.Replace(block, line, "Content-Type: "+new+"\r\n", 1)
		return append(append(append([]byte{}, pkg[:hdr]...), block...), pkg[start:]...)
	}
}

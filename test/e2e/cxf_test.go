package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	stdmime "mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpeer"
)

// filesNS is the namespace of the CXF peer's Files service (interop/cxf).
const filesNS = "urn:wssgw:interop:cxf"

// filesRequest is what a files backend received: the package's root and
// its other parts by Content-ID.
type filesRequest struct {
	contentType string
	root        []byte
	parts       map[string][]byte
}

// filesBackend is a plain (unsecured) Go implementation of the CXF peer's
// Files service behind wssgw: it records each request by its <name> and
// answers an MTOM uploadResponse that carries the uploaded attachment back,
// so a CXF client can check both directions byte for byte.
type filesBackend struct {
	*httptest.Server
	mu   sync.Mutex
	got  map[string]filesRequest
	errs []string
}

var filesNameRE = regexp.MustCompile(`<(?:\w+:)?name(?: [^>]*)?>([^<]*)</`)

func newFilesBackend(t *testing.T) *filesBackend {
	t.Helper()
	b := &filesBackend{got: map[string]filesRequest{}}
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.Close)
	return b
}

func (b *filesBackend) serve(w http.ResponseWriter, r *http.Request) {
	req, err := readFilesRequest(r)
	if err != nil {
		b.fail(w, err)
		return
	}
	m := filesNameRE.FindSubmatch(req.root)
	data, err := req.data()
	if m == nil || err != nil {
		b.fail(w, fmt.Errorf("want a <name> and the data (%v): %.500s", err, req.root))
		return
	}
	name := string(m[1])
	b.mu.Lock()
	b.got[name] = req
	b.mu.Unlock()
	envNS, rootType, startInfo := soap.NS11, "text/xml", "text/xml"
	if bytes.Contains(req.root, []byte(soap.NS12)) {
		envNS, rootType, startInfo = soap.NS12, "application/soap+xml", "application/soap+xml"
	}
	sum := sha256.Sum256(data)
	root := fmt.Sprintf(`<soap:Envelope xmlns:soap="%s"><soap:Body><f:uploadResponse xmlns:f="%s">`+
		`<f:name>%s</f:name><f:size>%d</f:size><f:sha256>%s</f:sha256><f:data>`+xopInclude+`</f:data>`+
		`</f:uploadResponse></soap:Body></soap:Envelope>`, envNS, filesNS, name, len(data), hex.EncodeToString(sum[:]), "cid:"+mtomAttCID)
	pkg := mtomPackage([]mtomPart{
		{mtomRootCID, fmt.Sprintf(`application/xop+xml; charset=UTF-8; type=%q`, rootType), []byte(root)},
		{mtomAttCID, "application/octet-stream", data},
	})
	w.Header().Set("Content-Type", fmt.Sprintf(`multipart/related; type="application/xop+xml"; start="<%s>"; start-info=%q; boundary=%q`,
		mtomRootCID, startInfo, mtomBoundary))
	_, _ = w.Write(pkg)
}

func (b *filesBackend) fail(w http.ResponseWriter, err error) {
	b.mu.Lock()
	b.errs = append(b.errs, err.Error())
	b.mu.Unlock()
	http.Error(w, err.Error(), http.StatusBadRequest)
}

// request returns what the backend received for the call named name.
func (b *filesBackend) request(name string) (filesRequest, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok := b.got[name]
	return r, ok
}

var filesDataRE = regexp.MustCompile(`<(?:\w+:)?data>([^<]*)</`)

// data is the uploaded file: the one attachment, or the base64 inline in
// <data> when there is none (WSS4J encrypting the Body of an MTOM message
// inlines the attachment first and drops its part).
func (r filesRequest) data() ([]byte, error) {
	switch len(r.parts) {
	case 1:
		for _, d := range r.parts {
			return d, nil
		}
	case 0:
		if m := filesDataRE.FindSubmatch(r.root); m != nil {
			return base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(m[1])), ""))
		}
	}
	return nil, fmt.Errorf("%d parts", len(r.parts))
}

// readFilesRequest splits an MTOM request into its root and other parts.
func readFilesRequest(r *http.Request) (filesRequest, error) {
	ct := r.Header.Get("Content-Type")
	media, params, err := stdmime.ParseMediaType(ct)
	if err != nil || media != "multipart/related" {
		return filesRequest{}, fmt.Errorf("not an MTOM request: %q", ct)
	}
	req := filesRequest{contentType: ct, parts: map[string][]byte{}}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return req, nil
		}
		if err != nil {
			return req, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return req, err
		}
		if req.root == nil {
			req.root = data
			continue
		}
		req.parts[strings.Trim(p.Header.Get("Content-ID"), "<>")] = data
	}
}

// tamperProxy sits between the CXF client and wssgw: /MODE/KEY/ROUTE is
// sent to wssgw's /ROUTE, with MODE "pass" unchanged, "att" one byte of the
// application/octet-stream part (the Body's attachment) flipped, and "bst"
// one byte of the part the BinarySecurityToken's xop:Include names flipped.
// It keeps each request as CXF sent it by KEY (the Body may be encrypted).
type tamperProxy struct {
	*httptest.Server
	mu   sync.Mutex
	sent map[string][]byte
}

var bstIncludeRE = regexp.MustCompile(`BinarySecurityToken[^>]*>\s*<(?:\w+:)?Include [^>]*href="cid:([^"]+)"`)

func newTamperProxy(t *testing.T, gw *gateway) *tamperProxy {
	t.Helper()
	p := &tamperProxy{sent: map[string][]byte{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mode, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		key, route, _ := strings.Cut(rest, "/")
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		p.mu.Lock()
		p.sent[key] = body
		p.mu.Unlock()
		switch mode {
		case "att":
			body = flipPartByte(body, func(h string) bool { return strings.Contains(h, "Content-Type: application/octet-stream") })
		case "bst":
			if m := bstIncludeRE.FindSubmatch(body); m != nil {
				cid, _ := url.PathUnescape(string(m[1]))
				body = flipPartByte(body, func(h string) bool { return strings.Contains(h, "Content-ID: <"+cid+">") })
			}
		}
		out, err := http.NewRequest(http.MethodPost, gw.data+"/"+route, bytes.NewReader(body))
		if err != nil {
			return
		}
		out.Header.Set("Content-Type", r.Header.Get("Content-Type"))
		out.Header.Set("SOAPAction", r.Header.Get("SOAPAction"))
		out.Header.Set("X-Request-Id", key) // the gateway's log line names it
		resp, err := http.DefaultClient.Do(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(p.Close)
	return p
}

// request returns the request CXF sent with KEY key.
func (p *tamperProxy) request(key string) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent[key]
}

// flipPartByte flips a byte in the middle of the content of the first MIME
// part whose header block matches; the package is returned unchanged if
// none does (the test then sees the call accepted and fails).
func flipPartByte(pkg []byte, match func(header string) bool) []byte {
	out := bytes.Clone(pkg)
	for off := 0; ; {
		h := bytes.Index(out[off:], []byte("\r\n--"))
		if h < 0 {
			return out
		}
		start := off + h
		end := bytes.Index(out[start:], []byte("\r\n\r\n"))
		if end < 0 {
			return out
		}
		header := string(out[start : start+end])
		content := start + end + 4
		next := bytes.Index(out[content:], []byte("\r\n--"))
		if match(header) && next > 0 {
			out[content+next/2] ^= 0x01
			return out
		}
		off = content
	}
}

// cxfGatewayConfig is a gateway in front of the files backend whose routes
// require a trusted signature over Body and Timestamp (wssgw's defaults),
// decrypt with the server key and sign every response: /buffered and
// /encrypted (Body encryption required) buffered, /strict streaming with
// strictXOP, /streaming streaming with the default format (strict-xop
// for an RSA requester, issue 15), and /legacy accepting WSS4J's own defaults (RSA-SHA1 over
// SHA-1 digests, only the Body signed, AES-128-CBC) as an operator must opt
// in to them.
func (p *partnerPKI) cxfGatewayConfig(backend, spool string) string {
	return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {drainTimeout: 10s}
mime: {spoolThreshold: 1KiB, spoolDir: %[3]s}
routes:
  - {name: buffered, path: /buffered, backend: %[1]s, policy: signed, maxBodyBytes: 4MiB}
  - {name: encrypted, path: /encrypted, backend: %[1]s, policy: encrypted, maxBodyBytes: 4MiB}
  - {name: strict, path: /strict, backend: %[1]s, policy: strict, maxBodyBytes: 4MiB}
  - {name: legacy, path: /legacy, backend: %[1]s, policy: legacy, maxBodyBytes: 4MiB}
  - {name: streaming, path: /streaming, backend: %[1]s, policy: streaming, maxBodyBytes: 4MiB}
policies:
  signed:
    trust: {caFiles: [%[2]s]}
    decryptionKeys: [{certFile: %[4]s, keyFile: %[5]s}]
    responses: {sign: true, certFile: %[4]s, keyFile: %[5]s}
  encrypted:
    require: [signature, encryption, timestamp]
    encryptedParts: [Body]
    trust: {caFiles: [%[2]s]}
    decryptionKeys: [{certFile: %[4]s, keyFile: %[5]s}]
    responses: {sign: true, certFile: %[4]s, keyFile: %[5]s}
  strict:
    trust: {caFiles: [%[2]s]}
    decryptionKeys: [{certFile: %[4]s, keyFile: %[5]s}]
    responses: {sign: true, certFile: %[4]s, keyFile: %[5]s, mode: streaming, strictXOP: true}
  streaming:
    trust: {caFiles: [%[2]s]}
    decryptionKeys: [{certFile: %[4]s, keyFile: %[5]s}]
    responses: {sign: true, certFile: %[4]s, keyFile: %[5]s, mode: streaming}
  legacy:
    signedParts: [Body]
    algorithms: {legacy: {sha1: true, cbc: true}}
    trust: {caFiles: [%[2]s]}
    decryptionKeys: [{certFile: %[4]s, keyFile: %[5]s}]
    responses: {sign: true, certFile: %[4]s, keyFile: %[5]s}
`, backend, p.ca, spool, p.server.CertFile, p.server.KeyFile)
}

// TestCXFClient: a real Apache CXF 4 JAX-WS client (interop/cxf) with
// MTOM on — so WSS4J's storeBytesInAttachment puts the
// BinarySecurityToken's certificate, and with encryption every
// CipherValue, into MIME parts — calls a plain Go backend through the
// wssgw binary, SOAP 1.1 and 1.2, signed and signed+encrypted (issue 15).
// wssgw accepts each call and forwards the attachment byte for byte without
// the header's parts; CXF's WSS4JInInterceptor verifies wssgw's buffered
// MTOM response signature and its strictXOP streaming one. A changed
// attachment or certificate part, and WSS4J's SHA-1 defaults on a default
// policy, reach the CXF caller as a SOAP fault and never the backend.
func TestCXFClient(t *testing.T) {
	jar := testpeer.Jar(t, "cxf")
	p := newPartnerPKI(t)
	photo, photoFile, sha := p.photo(t, 200<<10)

	backend := newFilesBackend(t)
	spool := t.TempDir()
	gw := startGateway(t, p.cxfGatewayConfig(backend.URL, spool))
	proxy := newTamperProxy(t, gw)

	type call struct {
		id, reason string // reason: why wssgw must refuse a fail/ call
		args       []string
	}
	var calls []call
	add := func(id, mode, route string, args func(url string) []string, reason ...string) {
		calls = append(calls, call{id, strings.Join(reason, ""), args(fmt.Sprintf("%s/%s/%s/%s", proxy.URL, mode, cxfKey(id), route))})
	}
	for _, v := range []string{"1.1", "1.2"} {
		with := func(extra ...string) func(string) []string {
			return func(url string) []string { return p.cxfCallArgs(url, v, photoFile, extra...) }
		}
		sign := []string{"--actions", "Timestamp Signature"}
		encrypt := []string{"--actions", "Timestamp Signature Encrypt"}
		strictResponse := []string{"--response-actions", "Timestamp Signature Encrypt"}
		add("ok/sign/"+v, "pass", "buffered", with(sign...))
		add("ok/sign-encrypt/"+v, "pass", "encrypted", with(encrypt...))
		add("ok/strictXOP response/"+v, "pass", "strict", with(append(sign, strictResponse...)...))
		add("ok/sign-encrypt strictXOP response/"+v, "pass", "strict", with(append(encrypt, strictResponse...)...))
		add("ok/streaming default strictXOP response/"+v, "pass", "streaming", with(append(sign, strictResponse...)...))
		add("fail/tampered attachment/"+v, "att", "buffered", with(sign...), "digest")
		// A byte of the certificate: its CA signature no longer verifies.
		add("fail/tampered BST/"+v, "bst", "buffered", with(sign...), "untrusted")
		add("fail/tampered BST sign-encrypt/"+v, "bst", "encrypted", with(encrypt...), "untrusted")
		// CXF's defaults as they come: WSS4J signs only the Body, RSA-SHA1 over SHA-1 digests.
		defaults := func(url string) []string { return cxfDefaults(p, url, v, photoFile) }
		add("ok/WSS4J defaults on a legacy policy/"+v, "pass", "legacy", defaults)
		add("ok/WSS4J defaults sign-encrypt on a legacy policy/"+v, "pass", "legacy", func(url string) []string {
			return append(cxfDefaults(p, url, v, photoFile), "--actions", "Timestamp Signature Encrypt", "--encrypt-cert", p.server.CertFile)
		})
		add("fail/WSS4J defaults on the default policy/"+v, "pass", "buffered", defaults, "algorithm")
	}

	var jobs []testpeer.Job
	for _, c := range calls {
		jobs = append(jobs, testpeer.Job{ID: c.id, Args: append(c.args, "--name", c.id)})
	}
	results := cxfCalls(t, jar, jobs)

	for _, c := range calls {
		r := results[c.id]
		t.Run(c.id, func(t *testing.T) {
			sent := proxy.request(cxfKey(c.id))
			got, forwarded := backend.request(c.id)
			switch {
			case strings.HasPrefix(c.id, "ok/"):
				want := []string{"Signature", "Timestamp"}
				if strings.Contains(c.id, "strictXOP") {
					want = append(want, "Encrypt")
				}
				cxfRequire(t, r, sha, want...)
				assert.Equal(t, "CN=server", r.Signer, "CXF verified wssgw's signing key")
				assert.Contains(t, r.ResponseContentType, "multipart/related", "an MTOM response")
				require.True(t, forwarded, "the backend never saw it")
				assert.NotContains(t, string(got.root), "Security", "the header stays at the gateway")
				assert.NotContains(t, string(got.root), "EncryptedData")
				data, err := got.data()
				require.NoError(t, err)
				assert.True(t, bytes.Equal(photo, data), "attachment bytes changed on the way")
				if strings.Contains(c.id, "sign-encrypt") {
					// WSS4J encrypts the Body's XOP infoset: the file travels
					// inside the EncryptedData, and arrives inline.
					assert.Empty(t, got.parts, "no part besides the root")
				} else {
					require.Len(t, got.parts, 1, "only the Body's attachment goes on, not the header's parts")
				}
				if sent == nil {
					return // not through the proxy
				}
				// What made this CXF's default MTOM form: the certificate in a part.
				assert.Regexp(t, bstIncludeRE, string(sent), "storeBytesInAttachment: the BST's certificate in a part")
				if strings.Contains(c.id, "sign-encrypt") {
					assert.Regexp(t, `CipherValue[^>]*>\s*<(\w+:)?Include `, string(sent), "storeBytesInAttachment: CipherValues in parts")
				}
			default:
				cxfFault(t, r, http.StatusInternalServerError)
				assert.Contains(t, r.Error, "An error was discovered processing the <wsse:Security> header")
				assert.False(t, forwarded, "the backend saw it")
				require.NotNil(t, sent)
				assert.Equal(t, c.reason, requestReason(t, gw, cxfKey(c.id)))
			}
		})
	}
	// CXF 4's default HTTP conduit (java.net.http, HTTP/2 preferred) offers
	// a plain-HTTP server an h2c upgrade: "Connection: Upgrade,
	// HTTP2-Settings", "Upgrade: h2c". wssgw ignores that offer (RFC 9110
	// §7.8; internal/gateway/upgrade.go) and answers in HTTP/1.1, so a stock
	// CXF client works without configuring its conduit. Its own JVM: CXF
	// shares one java.net.http client between conduits, so after an
	// HTTP/1.1 call the offer may not be made.
	t.Run("ok/default conduit offering h2c on plain HTTP", func(t *testing.T) {
		h2c := p.cxfCallArgs(gw.data+"/buffered", "1.1", photoFile, "--actions", "Timestamp Signature", "--name", "ok/h2c")
		r := cxfCalls(t, jar, []testpeer.Job{{ID: "h2c", Args: slicesDeleteFlag(h2c, "--http-version")}})["h2c"]
		require.True(t, r.OK, "%s", describeCXF(r))
		_, forwarded := backend.request("ok/h2c")
		assert.True(t, forwarded, "the backend did not get the call")
	})
	t.Run("ok/backend saw only verified calls", func(t *testing.T) {
		backend.mu.Lock()
		defer backend.mu.Unlock()
		assert.Empty(t, backend.errs)
		for name := range backend.got {
			assert.True(t, strings.HasPrefix(name, "ok/"), "forwarded: %s", name)
		}
	})
	assertSpoolEmpty(t, spool)
}

// cxfDefaults is a CXF call with WSS4J's defaults left alone (no
// --sign-timestamp, no algorithm flags), over HTTP/1.1.
func cxfDefaults(p *partnerPKI, url, soapVersion, attachment string) []string {
	return []string{"call", "--url", url, "--soap", soapVersion, "--key", p.client.KeyFile, "--cert", p.client.CertFile,
		"--ca", p.ca, "--attachment", attachment, "--http-version", "1.1", "--actions", "Timestamp Signature"}
}

// cxfKey is a call id as one URL path segment.
func cxfKey(id string) string { return strings.NewReplacer("/", "_", " ", "_").Replace(id) }

// slicesDeleteFlag removes a "--flag value" pair from args.
func slicesDeleteFlag(args []string, flag string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == flag {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"time"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

const (
	boundary   = "bench-mtom-boundary-5e1d"
	rootCID    = "root@bench.example"
	dataCID    = "data@bench.example"
	xopInclude = `<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:` + dataCID + `"/>`
)

// content is the attachment: size bytes of ChaCha8 output, the same on
// both passes.
func content(size int64, seed uint64) io.Reader {
	var s [32]byte
	s[0], s[1] = byte(seed), byte(seed>>8)
	return io.LimitReader(rand.NewChaCha8(s), size)
}

// signedDownloads returns what makes a download request signed by the
// demo partner (RSA; Timestamp, BST, Body), fresh for each request: the
// streaming-strict gateway encrypts the response signature for its
// certificate. Signing happens before the request's clock starts.
func signedDownloads(keys string) (func() ([]byte, error), error) {
	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{
		CertFile: filepath.Join(keys, "partner.crt"),
		KeyFile:  filepath.Join(keys, "partner.key"),
	})
	if err != nil {
		return nil, err
	}
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = kp.Signer, kp.Certificate
	return func() ([]byte, error) { return signer.Secure([]byte(downloadRequest), o) }, nil
}

// signedRoot is the first pass: it signs, with internal/signer, the
// envelope whose Body holds the base64 of the whole attachment inline, and
// replaces that text by an xop:Include. The Body's digest is then over its
// XOP infoset (XOP 1.0 §3.2), which is what wssgw computes from the part.
// This holds the base64 in this process's memory (about 3x the size);
// only the gateway's memory is measured.
func signedRoot(keys string, size int64, seed uint64) ([]byte, error) {
	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{
		CertFile: filepath.Join(keys, "partner.crt"),
		KeyFile:  filepath.Join(keys, "partner.key"),
	})
	if err != nil {
		return nil, err
	}
	env, b64, err := inlineEnvelope(size, seed)
	if err != nil {
		return nil, err
	}
	gate, err := bigGate(len(env))
	if err != nil {
		return nil, err
	}
	o := signer.DefaultOptions()
	o.Signer, o.Certificate, o.TTL, o.Gate = kp.Signer, kp.Certificate, time.Hour, gate
	signed, err := signer.Secure(env, o)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	i := bytes.Index(signed, b64)
	if i < 0 {
		return nil, fmt.Errorf("the signed envelope lost the inline base64")
	}
	root := make([]byte, 0, len(signed)-len(b64)+len(xopInclude))
	root = append(append(append(root, signed[:i]...), xopInclude...), signed[i+len(b64):]...)
	return root, nil
}

// inlineEnvelope returns the envelope and, aliasing it, its base64 text.
func inlineEnvelope(size int64, seed uint64) (env, b64 []byte, err error) {
	const head = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
		`<f:Upload xmlns:f="urn:bench:files"><f:data>`
	const tail = `</f:data></f:Upload></soapenv:Body></soapenv:Envelope>`
	n := base64.StdEncoding.EncodedLen(int(size))
	env = make([]byte, 0, len(head)+n+len(tail))
	env = append(env, head...)
	w := base64.NewEncoder(base64.StdEncoding, &appender{b: &env})
	if _, err := io.Copy(w, content(size, seed)); err != nil {
		return nil, nil, err
	}
	if err := w.Close(); err != nil {
		return nil, nil, err
	}
	b64 = env[len(head):]
	env = append(env, tail...)
	return env, b64[:n:n], nil
}

type appender struct{ b *[]byte }

func (a *appender) Write(p []byte) (int, error) { *a.b = append(*a.b, p...); return len(p), nil }

// bigGate is xmlscan's default gate with room for an n-byte envelope.
func bigGate(n int) (*xmlscan.Scanner, error) {
	cfg := xmlscan.DefaultConfig()
	cfg.Limits.MaxBytes = 2*n + 1<<20
	cfg.Limits.MaxTextLen = 2*n + 1<<20
	cfg.Limits.MaxBase64Len = 2*n + 1<<20
	return xmlscan.NewScanner(cfg)
}

// upload is the second pass: the package, with the attachment generated
// again, sent with chunked encoding (no Content-Length).
func upload(url string, root []byte, size int64, seed uint64) error {
	head, end := framing(mtomRootType, root)
	body := io.MultiReader(bytes.NewReader(head), content(size, seed), bytes.NewReader(end))
	req, err := http.NewRequest(http.MethodPost, url, io.NopCloser(body)) // NopCloser: length unknown, chunked
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", mtomType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("wssgw answered %s: %s", resp.Status, b)
	}
	return nil
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/wssgw/wssgw/bench/proc"
)

// checkSize is the response size whose signatures are verified in full.
const checkSize = 1 << 20

// checkSignatures verifies, once, what the signing gateways send: the
// streamed package's last part carries the signature and `wssgw verify
// --content-type` accepts the package (and rejects it with one
// attachment byte changed); the buffered envelope verifies too. Both
// with the demo CA as the only trust anchor.
func checkSignatures(o options, c *http.Client, gws []*proc.Wssgw, ms []mode) error {
	dir, err := os.MkdirTemp("", "bench-mtom-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg, err := verifyConfig(dir, o.keys)
	if err != nil {
		return err
	}
	v := verifier{bin: o.wssgw, config: cfg}
	// The requester's key decrypts streaming-strict's signature.
	partnerKey, err := filepath.Abs(filepath.Join(o.keys, "partner.key"))
	if err != nil {
		return err
	}
	for i, m := range ms {
		var err error
		switch m.name {
		case "streaming", modeStreamingStrict:
			sv := v
			if m.name == modeStreamingStrict {
				sv.args = []string{"--key", partnerKey}
			}
			err = checkStreamed(c, m, fileURL(gws[i], m, checkSize), dir, sv)
		case "buffered":
			err = checkBuffered(c, m, fileURL(gws[i], m, checkSize), dir, v)
		case modeBufferedPackage:
			err = checkBufferedPackage(c, m, fileURL(gws[i], m, checkSize), dir, v)
		}
		if err != nil {
			return fmt.Errorf("%s signature check: %w", m.name, err)
		}
	}
	fmt.Printf("checked at %s: the streamed package's last part is its ds:Signature (streaming-strict: encrypted); wssgw verify accepts it, rejects it with one attachment byte changed, and accepts the buffered envelope and the buffered package (rejecting it too with an attachment byte changed)\n", sizeList([]int64{checkSize}))
	return nil
}

func checkStreamed(c *http.Client, m mode, url, dir string, v verifier) error {
	var pkg bytes.Buffer
	s, err := fetch(c, m, url, &pkg)
	if err != nil {
		return err
	}
	strict := m.name == modeStreamingStrict
	if err := lastPartSigned(s.ctype, pkg.Bytes(), strict); err != nil {
		return err
	}
	file := filepath.Join(dir, "streamed.mime")
	if err := os.WriteFile(file, pkg.Bytes(), 0o600); err != nil {
		return err
	}
	if err := v.run(file, s.ctype); err != nil {
		return err
	}
	// The middle of the package is attachment bytes.
	b := pkg.Bytes()
	b[len(b)/2] ^= 1
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return err
	}
	if err := v.run(file, s.ctype); err == nil {
		return errors.New("wssgw verify accepted the package with an attachment byte changed")
	}
	return nil
}

func checkBuffered(c *http.Client, m mode, url, dir string, v verifier) error {
	var env bytes.Buffer
	if _, err := fetch(c, m, url, &env); err != nil {
		return err
	}
	file := filepath.Join(dir, "buffered.xml")
	if err := os.WriteFile(file, env.Bytes(), 0o600); err != nil {
		return err
	}
	return v.run(file, "")
}

// checkBufferedPackage: the package keeps its parts, `wssgw verify
// --content-type` accepts it, and rejects it with an attachment byte
// changed.
func checkBufferedPackage(c *http.Client, m mode, url, dir string, v verifier) error {
	var pkg bytes.Buffer
	s, err := fetch(c, m, url, &pkg)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(s.ctype, "multipart/related") {
		return fmt.Errorf("got %q, not a package", s.ctype)
	}
	file := filepath.Join(dir, "buffered.mime")
	if err := os.WriteFile(file, pkg.Bytes(), 0o600); err != nil {
		return err
	}
	if err := v.run(file, s.ctype); err != nil {
		return err
	}
	b := pkg.Bytes()
	b[len(b)/2] ^= 1 // attachment bytes
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return err
	}
	if err := v.run(file, s.ctype); err == nil {
		return errors.New("wssgw verify accepted the buffered package with an attachment byte changed")
	}
	return nil
}

// lastPartSigned parses the package and checks that it has the root, the
// attachment and, last, the signature part (DESIGN.md §6); strict: the
// signature encrypted, the root holding its EncryptedData.
func lastPartSigned(ctype string, pkg []byte, strict bool) error {
	_, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return fmt.Errorf("Content-Type %q: %w", ctype, err)
	}
	r := multipart.NewReader(bytes.NewReader(pkg), params["boundary"])
	var parts [][]byte
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("part %d: %w", len(parts)+1, err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return fmt.Errorf("part %d: %w", len(parts)+1, err)
		}
		parts = append(parts, b)
	}
	if strict {
		if len(parts) != 3 || !bytes.Contains(parts[0], []byte("<xenc:EncryptedData ")) || bytes.Contains(parts[0], []byte("SignatureValue")) {
			return fmt.Errorf("want 3 parts, the signature encrypted; got %d parts", len(parts))
		}
		return nil
	}
	if len(parts) != 3 || !bytes.Contains(parts[2], []byte("SignatureValue")) || bytes.Contains(parts[0], []byte("SignatureValue")) {
		return fmt.Errorf("want 3 parts, the signature value in the last one only; got %d parts", len(parts))
	}
	return nil
}

// verifier runs `wssgw verify` on a saved response; args are more flags.
type verifier struct {
	bin, config string
	args        []string
}

func (v verifier) run(file, ctype string) error {
	args := append([]string{"verify", "-c", v.config, "--policy", "check"}, v.args...)
	if ctype != "" {
		args = append(args, "--content-type", ctype)
	}
	out, err := exec.Command(v.bin, append(args, file)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("wssgw verify: %w: %s", err, lastLines(out))
	}
	return nil
}

// verifyConfig writes the configuration that verify reads: a policy
// requiring a signature and a Timestamp from a signer under the demo CA,
// with limits that admit the checked response.
func verifyConfig(dir, keys string) (string, error) {
	ca, err := filepath.Abs(filepath.Join(keys, "ca.crt"))
	if err != nil {
		return "", err
	}
	cfg := fmt.Sprintf(`routes:
  - {name: check, path: /check, backend: "http://127.0.0.1:9", policy: check, maxBodyBytes: 64MiB}
xml: {maxTextBytes: 64MiB, maxBase64Bytes: 64MiB}
policies:
  check:
    require: [signature, timestamp]
    trust: {caFiles: [%q]}
`, ca)
	file := filepath.Join(dir, "verify.yaml")
	return file, os.WriteFile(file, []byte(cfg), 0o600)
}

// lastLines is the end of a command's output, for an error message.
func lastLines(b []byte) []byte {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return bytes.TrimSpace(b)
}

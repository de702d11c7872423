package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

const downloadRequest = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
	`<f:Download xmlns:f="urn:bench:files"/></soapenv:Body></soapenv:Envelope>`

// sample is one response as the client saw it.
type sample struct {
	ttfb  time.Duration // request sent to first body byte read
	total time.Duration // request sent to last body byte read
	bytes int64         // body bytes
	ctype string
	probe probe
}

// fetch asks url for a response with the next request of mode m and
// reads its body into w (io.Discard when timing), keeping its first and
// last bytes for the checks.
func fetch(c *http.Client, m mode, url string, w io.Writer) (sample, error) {
	body, err := m.body()
	if err != nil {
		return sample{}, err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return sample{}, err
	}
	req.Header.Set("Content-Type", "text/xml; charset=UTF-8")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return sample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return sample{}, fmt.Errorf("wssgw answered %s: %s", resp.Status, b)
	}
	s := sample{ctype: resp.Header.Get("Content-Type")}
	buf := make([]byte, 256<<10)
	n, err := readSome(resp.Body, buf)
	s.ttfb = time.Since(start)
	out := io.MultiWriter(w, &s.probe)
	if _, werr := out.Write(buf[:n]); werr != nil {
		return s, werr
	}
	if err == nil {
		var m int64
		m, err = io.CopyBuffer(out, onlyReader{resp.Body}, buf)
		s.bytes = m
	}
	s.total = time.Since(start)
	s.bytes += int64(n)
	if err != nil && err != io.EOF {
		// A streamed response cut before its signature part ends here.
		return s, fmt.Errorf("reading the response after %d bytes: %w", s.bytes, err)
	}
	return s, nil
}

// readSome reads until it has at least one byte (or an error).
func readSome(r io.Reader, buf []byte) (int, error) {
	for {
		n, err := r.Read(buf)
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// onlyReader hides WriterTo/ReaderFrom so that CopyBuffer uses buf.
type onlyReader struct{ io.Reader }

// probeLen is how much of each end of a response the probe keeps.
const probeLen = 16 << 10

// probe keeps the first and last probeLen bytes written to it: enough to
// see a Security header at the start and a signature part at the end.
type probe struct {
	head, tail []byte
}

func (p *probe) Write(b []byte) (int, error) {
	if room := probeLen - len(p.head); room > 0 {
		p.head = append(p.head, b[:min(room, len(b))]...)
	}
	if len(b) >= probeLen {
		p.tail = append(p.tail[:0], b[len(b)-probeLen:]...)
	} else {
		p.tail = append(p.tail, b...)
		if extra := len(p.tail) - probeLen; extra > 0 {
			p.tail = append(p.tail[:0], p.tail[extra:]...)
		}
	}
	return len(b), nil
}

// check says whether the response has the shape its mode gives it: the
// exact unsigned package; an MTOM package ending with the signature part
// and its close delimiter; an envelope with a signed Security header.
func (s sample) check(m mode, size int64) error {
	switch m.name {
	case "unsigned":
		want := packageLen(m.kind, size)
		if s.bytes != want || bytes.Contains(s.probe.head, []byte("Security")) {
			return fmt.Errorf("unsigned: got %d bytes (want %d, the backend's package untouched)", s.bytes, want)
		}
	case "streaming":
		if !strings.HasPrefix(s.ctype, "multipart/related") || !bytes.Contains(s.probe.head, []byte("Security")) ||
			!bytes.Contains(s.probe.tail, []byte("SignatureValue")) || !bytes.HasSuffix(bytes.TrimSpace(s.probe.tail), []byte("--")) {
			return fmt.Errorf("streaming: the response (%s, %d bytes) does not end with a signature part", s.ctype, s.bytes)
		}
	case modeStreamingStrict:
		// strict-xop: the signature encrypted, its ciphertext the last part.
		if !strings.HasPrefix(s.ctype, "multipart/related") || !bytes.Contains(s.probe.head, []byte("EncryptedData")) ||
			!bytes.Contains(s.probe.tail, []byte("application/octet-stream")) || !bytes.HasSuffix(bytes.TrimSpace(s.probe.tail), []byte("--")) {
			return fmt.Errorf("%s: the response (%s, %d bytes) does not end with an encrypted signature part", m.name, s.ctype, s.bytes)
		}
	case modeBufferedPackage:
		if !strings.HasPrefix(s.ctype, "multipart/related") || !bytes.Contains(s.probe.head, []byte("SignatureValue")) || s.bytes < packageLen(m.kind, size) {
			return fmt.Errorf("%s: the response (%s, %d bytes) is not the package with a signed root", m.name, s.ctype, s.bytes)
		}
	case "buffered":
		if !bytes.Contains(s.probe.head, []byte("SignatureValue")) || s.bytes < inlineLen(size) {
			return fmt.Errorf("buffered: the response (%d bytes) is not the signed envelope", s.bytes)
		}
	}
	return nil
}

package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// The backend's paths: filesPath + kind + "/" + attachment size in bytes.
const (
	filesPath  = "/files/"
	kindMTOM   = "mtom"   // an MTOM package, the attachment as its binary part
	kindSwA    = "swa"    // an SwA package, the root naming the attachment by swaRef
	kindInline = "inline" // one SOAP envelope, the attachment inline as base64
)

const (
	mtomType     = `multipart/related; type="application/xop+xml"; start="<` + rootCID + `>"; start-info="text/xml"; boundary="` + boundary + `"`
	mtomRootType = `application/xop+xml; charset=UTF-8; type="text/xml"`
	swaType      = `multipart/related; type="text/xml"; start="<` + rootCID + `>"; boundary="` + boundary + `"`
	swaRootType  = `text/xml; charset=UTF-8`

	responseHead = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
		`<f:DownloadResponse xmlns:f="urn:bench:files"><f:data>`
	responseTail = `</f:data></f:DownloadResponse></soapenv:Body></soapenv:Envelope>`
)

// framing is what a package of one attachment has around the
// attachment's bytes: the root part, then the attachment's part header;
// the close delimiter.
func framing(rootType string, root []byte) (head, end []byte) {
	head = fmt.Appendf(nil, "--%s\r\nContent-Type: %s\r\nContent-ID: <%s>\r\n\r\n", boundary, rootType, rootCID)
	head = append(head, root...)
	head = fmt.Appendf(head, "\r\n--%s\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\nContent-ID: <%s>\r\n\r\n", boundary, dataCID)
	return head, fmt.Appendf(nil, "\r\n--%s--\r\n", boundary)
}

// responder is the SOAP service behind the gateways: it answers any POST
// with a response carrying an attachment of the size in its path, streamed
// from src with a Content-Length, as a file service would.
type responder struct {
	*http.Server
	url string
	src *source
}

func startResponder(src *source) (*responder, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	r := &responder{url: "http://" + ln.Addr().String(), src: src}
	r.Server = &http.Server{Handler: r}
	go func() { _ = r.Serve(ln) }()
	return r, nil
}

func (r *responder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	kind, size, err := parseFilesPath(req.URL.Path)
	if err != nil || req.Method != http.MethodPost {
		http.Error(w, "want POST "+filesPath+"{mtom,swa,inline}/SIZE", http.StatusNotFound)
		return
	}
	_, _ = io.Copy(io.Discard, req.Body)
	// A write error is the gateway going away: nothing to answer.
	_ = r.src.respond(w, kind, size)
}

// respond writes the whole response of one kind.
func (s *source) respond(w http.ResponseWriter, kind string, size int64) error {
	h := w.Header()
	if kind == kindInline {
		h.Set("Content-Type", "text/xml; charset=UTF-8")
		h.Set("Content-Length", strconv.FormatInt(inlineLen(size), 10))
		if _, err := io.WriteString(w, responseHead); err != nil {
			return err
		}
		if err := s.writeBase64(w, size); err != nil {
			return err
		}
		_, err := io.WriteString(w, responseTail)
		return err
	}
	ctype, head, end := responsePackage(kind)
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.FormatInt(packageLen(kind, size), 10))
	if _, err := w.Write(head); err != nil {
		return err
	}
	if err := s.writeRaw(w, size); err != nil {
		return err
	}
	_, err := w.Write(end)
	return err
}

// responsePackage is the Content-Type and framing of a response package:
// MTOM (the Body's xop:Include names the attachment, XOP 1.0 §3) or SwA
// (a swaRef, WS-I Attachments Profile 1.0 §4.4).
func responsePackage(kind string) (ctype string, head, end []byte) {
	if kind == kindSwA {
		head, end = framing(swaRootType, []byte(responseHead+"cid:"+dataCID+responseTail))
		return swaType, head, end
	}
	head, end = framing(mtomRootType, []byte(responseHead+xopInclude+responseTail))
	return mtomType, head, end
}

// packageLen is the length of a response package of a size-byte
// attachment.
func packageLen(kind string, size int64) int64 {
	_, head, end := responsePackage(kind)
	return int64(len(head)) + size + int64(len(end))
}

// inlineLen is the length of the inline response for a size-byte
// attachment.
func inlineLen(size int64) int64 {
	return int64(len(responseHead)+len(responseTail)) + (size+2)/3*4
}

// parseFilesPath splits "/files/mtom/1048576".
func parseFilesPath(p string) (kind string, size int64, err error) {
	rest, ok := strings.CutPrefix(p, filesPath)
	kind, num, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || (kind != kindMTOM && kind != kindSwA && kind != kindInline) {
		return "", 0, fmt.Errorf("path %q: want %s{%s,%s,%s}/SIZE", p, filesPath, kindMTOM, kindSwA, kindInline)
	}
	size, err = strconv.ParseInt(num, 10, 64)
	if err != nil || size < 0 || size > maxResponseSize {
		return "", 0, fmt.Errorf("path %q: size must be 0 to %d bytes", p, maxResponseSize)
	}
	return kind, size, nil
}

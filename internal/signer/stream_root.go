package signer

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/textproto"
	"strings"
	"time"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// streamRoot is a streamed package's state once its root part is read.
type streamRoot struct {
	s      *Stream
	parts  Parts
	env    *envelope
	p      *plan
	edits  []edit
	header textproto.MIMEHeader // the root part's, as it goes out
	bytes  []byte               // the root part's content, as it goes out

	// digests are the Reference digests in p.refs order; the Body's (index
	// 0) is filled in at the end in xop mode, the cid ones as parts pass.
	digests [][]byte
	// xop mode: the canonical Body split at its xop:Include elements, the
	// cids they name in document order, and the Body's running digest.
	segs     [][]byte
	includes []string
	xopNext  int // includes whose parts have been digested
	bodyHash hash.Hash
	// Content-IDs seen, against duplicates and a clash with ours.
	seen map[string]bool
	// strict variant: the data key of the encrypted signature.
	key []byte
}

func newStreamRoot(s *Stream, parts Parts, hdr textproto.MIMEHeader, body io.Reader) (*streamRoot, error) {
	if err := checkRootType(hdr.Get("Content-Type")); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(body, s.o.MaxRootSize+1))
	if err != nil {
		return nil, fmt.Errorf("signer: reading the root part: %w", err)
	}
	if int64(len(data)) > s.o.MaxRootSize {
		return nil, fmt.Errorf("%w: root part larger than %d bytes", ErrPackage, s.o.MaxRootSize)
	}
	// The security work starts once the root part is in.
	start := time.Now()
	defer func() { s.signTime += time.Since(start) }()
	env, err := parseEnvelope(s.r.Gate, data, nil)
	if err != nil {
		return nil, err
	}
	rt := &streamRoot{s: s, parts: parts, env: env, header: outHeader(hdr), seen: map[string]bool{s.sigCID: true}}
	if err := rt.init(); err != nil {
		rt.release()
		return nil, err
	}
	return rt, nil
}

func (rt *streamRoot) init() error {
	r := rt.s.r
	var err error
	if rt.p, rt.edits, err = newPlan(r, rt.env); err != nil {
		return err
	}
	if rt.s.o.StrictXOP {
		if err := rt.wrapKey(); err != nil {
			return err
		}
	}
	if rt.includes, err = xopIncludes(rt.env); err != nil {
		return err
	}
	if err := rt.digestRoot(); err != nil {
		return err
	}
	rt.bytes = assemble(rt.env.d, rt.edits, rt.p.securityWith(rt.placeholder), nil)
	return nil
}

// checkRootType accepts the root types of MTOM (application/xop+xml, XOP
// 1.0 §4.1) and SwA (text/xml, application/soap+xml).
func checkRootType(ct string) error {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return fmt.Errorf("%w: root Content-Type %q: %w", ErrPackage, ct, err)
	}
	switch mt {
	case "application/xop+xml", "text/xml", "application/soap+xml":
		return nil
	}
	return fmt.Errorf("%w: root Content-Type %q is not SOAP", ErrPackage, mt)
}

// outHeader is a part's header as it goes out: the content is sent as it
// was decoded, so the transfer encoding becomes binary (RFC 2045 §6.2).
func outHeader(h textproto.MIMEHeader) textproto.MIMEHeader {
	out := textproto.MIMEHeader{}
	for k, v := range h {
		out[k] = append([]string(nil), v...)
	}
	if cte := strings.ToLower(out.Get("Content-Transfer-Encoding")); cte == "base64" || cte == "quoted-printable" {
		out.Set("Content-Transfer-Encoding", "binary")
	}
	out.Del("Content-Length")
	return out
}

// xopIncludes returns the cids of the Body's xop:Include elements in
// document order. One outside the Body would name a part no signature
// covers; one naming no cid, or a part twice, is not XOP (XOP 1.0 §3).
func xopIncludes(env *envelope) ([]string, error) {
	d := env.d
	body := &d.Elements[env.body]
	var out []string
	seen := map[string]bool{}
	for e := range d.Elements {
		el := &d.Elements[e]
		if el.Space != nsXOP || el.Local != "Include" {
			continue
		}
		if e < env.body || e >= body.Next {
			return nil, fmt.Errorf("%w: xop:Include outside the Body would be unsigned", ErrPackage)
		}
		if el.Next != e+1 {
			return nil, fmt.Errorf("%w: xop:Include with children", ErrPackage)
		}
		href := attr0(d, e, "href")
		cid, ok := strings.CutPrefix(href, "cid:")
		if !ok || cid == "" {
			return nil, fmt.Errorf("%w: xop:Include href %q is not a cid: URL", ErrPackage, href)
		}
		cid, err := unescapeCID(cid)
		if err != nil {
			return nil, fmt.Errorf("%w: xop:Include href %q: %w", ErrPackage, href, err)
		}
		if seen[cid] {
			return nil, fmt.Errorf("%w: two xop:Include elements name %q", ErrPackage, cid)
		}
		seen[cid] = true
		out = append(out, cid)
	}
	return out, nil
}

func attr0(d *xmlscan.Document, e int, local string) string {
	if j := d.FindAttr(e, "", local); j >= 0 {
		return string(d.AttrValue(j, nil))
	}
	return ""
}

// digestRoot digests the References whose content is in the root part:
// the Timestamp and the SignatureConfirmations now; the Body now too,
// unless xop mode has to insert its parts, where the canonical Body is
// split at markers standing for the xop:Include elements.
func (rt *streamRoot) digestRoot() error {
	r, d := rt.s.r, rt.env.d
	var marked []byte
	var markers []string
	if len(rt.includes) > 0 {
		var err error
		if marked, markers, err = markIncludes(r, d, rt.env.body); err != nil {
			return err
		}
	}
	msg := assemble(d, rt.edits, rt.p.security(nil, nil), marked)
	doc := getDoc()
	defer putDoc(doc)
	if err := rt.s.r.Gate.Scan(msg, doc); err != nil {
		return fmt.Errorf("signer: assembled message fails the gate: %w", err)
	}
	idx, err := findIDs(doc, rt.p.refs)
	if err != nil {
		return err
	}
	rt.digests = make([][]byte, len(rt.p.refs))
	for i, rf := range rt.p.refs {
		h := newDigest(r.DigestAlgorithm)
		if i == 0 && markers != nil {
			// XMLDSig §4.4.3.3: "#id" without comments, exc-c14n (BSP R5423).
			var c bytes.Buffer
			if err := c14n.ExclusiveTo(&c, doc, idx[i], prefixesIf(r, rf.prefixes), false); err != nil {
				return fmt.Errorf("signer: canonicalize #%s: %w", rf.id, err)
			}
			if rt.segs, err = splitAt(c.Bytes(), markers); err != nil {
				return err
			}
			rt.bodyHash = h
			h.Write(rt.segs[0])
			continue
		}
		if err := c14n.ExclusiveTo(h, doc, idx[i], prefixesIf(r, rf.prefixes), false); err != nil {
			return fmt.Errorf("signer: canonicalize #%s: %w", rf.id, err)
		}
		rt.digests[i] = h.Sum(nil)
	}
	return nil
}

// markIncludes returns the Body content with each xop:Include element
// replaced by a unique marker: random letters and digits, which C14N
// renders unchanged as text (C14N §2.3), so the canonical form splits at
// them into the constant pieces between the included parts.
func markIncludes(r *resolved, d *xmlscan.Document, body int) ([]byte, []string, error) {
	el := &d.Elements[body]
	var out []byte
	var markers []string
	last := el.StartEnd
	for e := body + 1; e < el.Next; e++ {
		inc := &d.Elements[e]
		if inc.Space != nsXOP || inc.Local != "Include" {
			continue
		}
		m, err := newID(r, fmt.Sprintf("xopmark%dx", len(markers)))
		if err != nil {
			return nil, nil, err
		}
		out = append(append(out, d.Data[last:inc.Start]...), m...)
		markers = append(markers, m)
		last = inc.End
		e = inc.Next - 1
	}
	return append(out, d.Data[last:el.EndStart]...), markers, nil
}

// splitAt splits c at each marker, which must occur once and in order.
func splitAt(c []byte, markers []string) ([][]byte, error) {
	segs := make([][]byte, 0, len(markers)+1)
	for _, m := range markers {
		i := bytes.Index(c, []byte(m))
		if i < 0 || bytes.Count(c, []byte(m)) != 1 {
			return nil, fmt.Errorf("signer: internal: XOP marker not found once in the canonical Body")
		}
		segs = append(segs, bytes.Clone(c[:i]))
		c = c[i+len(m):]
	}
	return append(segs, bytes.Clone(c)), nil
}

// wrapKey makes the strict variant's data key and wraps it for the
// recipient, the EncryptedKey going out in the root part.
func (rt *streamRoot) wrapKey() error {
	r := rt.s.r
	rt.key = make([]byte, r.dataKeyLen)
	if _, err := io.ReadFull(r.Rand, rt.key); err != nil {
		return fmt.Errorf("signer: random key: %w", err)
	}
	var err error
	rt.p.ekCipher, err = encryptKey(r.KeyTransport, r.EncryptFor.PublicKey, rt.key)
	return err
}

func (rt *streamRoot) release() {
	if rt.env != nil {
		putDoc(rt.env.d)
		rt.env = nil
	}
}

// escapeCID writes a Content-ID as a cid: URL (RFC 2392 §2): characters
// that are not allowed in a URL are %-encoded.
func escapeCID(cid string) string {
	var b strings.Builder
	for i := 0; i < len(cid); i++ {
		c := cid[i]
		if c < 0x80 && (isAlnum(c) || strings.IndexByte("-._~!$&'()*+,;=:@/", c) >= 0) {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
	}
	return b.String()
}

func unescapeCID(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("truncated %%-escape")
		}
		v, err := hex.DecodeString(s[i+1 : i+3])
		if err != nil {
			return "", fmt.Errorf("bad %%-escape: %w", err)
		}
		b.WriteByte(v[0])
		i += 2
	}
	return b.String(), nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

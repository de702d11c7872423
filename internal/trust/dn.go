package trust

import (
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// AVA is one attribute type and value of a distinguished name. Value is the
// string value; when Raw is set it is instead the lower-case hex of a BER
// value that is not a string (written "#..." in RFC 4514).
type AVA struct {
	Type  asn1.ObjectIdentifier
	Value string
	Raw   bool
}

// RDN is a relative distinguished name (usually one AVA; several with '+').
type RDN []AVA

// DN is a distinguished name in RFC 4514 string order: the most specific
// RDN (e.g. CN) first, which is the reverse of the ASN.1 order.
type DN []RDN

var dnKeywords = map[string]asn1.ObjectIdentifier{
	"CN": {2, 5, 4, 3}, "SN": {2, 5, 4, 4}, "SERIALNUMBER": {2, 5, 4, 5},
	"C": {2, 5, 4, 6}, "L": {2, 5, 4, 7}, "ST": {2, 5, 4, 8}, "S": {2, 5, 4, 8},
	"STREET": {2, 5, 4, 9}, "O": {2, 5, 4, 10}, "OU": {2, 5, 4, 11},
	"T": {2, 5, 4, 12}, "TITLE": {2, 5, 4, 12}, "POSTALCODE": {2, 5, 4, 17},
	"GIVENNAME": {2, 5, 4, 42}, "INITIALS": {2, 5, 4, 43},
	"GENERATIONQUALIFIER": {2, 5, 4, 44}, "DNQUALIFIER": {2, 5, 4, 46},
	"ORGANIZATIONIDENTIFIER": {2, 5, 4, 97},
	"DC":                     {0, 9, 2342, 19200300, 100, 1, 25},
	"UID":                    {0, 9, 2342, 19200300, 100, 1, 1},
	"EMAILADDRESS":           {1, 2, 840, 113549, 1, 9, 1}, "E": {1, 2, 840, 113549, 1, 9, 1},
}

// dnNames is the preferred keyword for formatting.
var dnNames = map[string]string{
	"2.5.4.3": "CN", "2.5.4.4": "SN", "2.5.4.5": "SERIALNUMBER", "2.5.4.6": "C",
	"2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.9": "STREET", "2.5.4.10": "O",
	"2.5.4.11": "OU", "2.5.4.12": "T", "2.5.4.17": "POSTALCODE", "2.5.4.42": "GIVENNAME",
	"2.5.4.43": "INITIALS", "2.5.4.44": "GENERATIONQUALIFIER", "2.5.4.46": "DNQUALIFIER",
	"2.5.4.97": "ORGANIZATIONIDENTIFIER", "0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1": "UID", "1.2.840.113549.1.9.1": "EMAILADDRESS",
}

// ParseDN parses an RFC 4514 (RFC 2253) distinguished name, also accepting
// the legacy forms seen in WS-Security IssuerName: quoted values
// (CN="a, b"), ';' separators, spaces around separators and '=', "OID."
// prefixes and "#hex" BER values (decoded when they hold a string).
func ParseDN(s string) (DN, error) {
	p := dnParser{s: s}
	dn, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("crypto: DN %q at offset %d: %v: %w", truncate(s, 200), p.i, err, ErrBadDN)
	}
	return dn, nil
}

type dnParser struct {
	s string
	i int
}

func (p *dnParser) parse() (DN, error) {
	var dn DN
	p.skipSpace()
	if p.i == len(p.s) {
		return dn, nil
	}
	rdn := RDN{}
	for {
		ava, err := p.ava()
		if err != nil {
			return nil, err
		}
		rdn = append(rdn, ava)
		p.skipSpace()
		if p.i == len(p.s) {
			return append(dn, rdn), nil
		}
		switch p.s[p.i] {
		case '+':
		case ',', ';':
			dn, rdn = append(dn, rdn), RDN{}
		default:
			return nil, fmt.Errorf("unexpected %q", p.s[p.i])
		}
		p.i++
		p.skipSpace()
	}
}

func (p *dnParser) skipSpace() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *dnParser) ava() (AVA, error) {
	typ, err := p.attrType()
	if err != nil {
		return AVA{}, err
	}
	p.skipSpace()
	if p.i == len(p.s) || p.s[p.i] != '=' {
		return AVA{}, fmt.Errorf("missing '='")
	}
	p.i++
	p.skipSpace()
	a := AVA{Type: typ}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '#':
		a.Value, a.Raw, err = p.hexValue()
	case p.i < len(p.s) && p.s[p.i] == '"':
		a.Value, err = p.quotedValue()
	default:
		a.Value, err = p.plainValue()
	}
	return a, err
}

func (p *dnParser) attrType() (asn1.ObjectIdentifier, error) {
	start := p.i
	for p.i < len(p.s) && isTypeChar(p.s[p.i]) {
		p.i++
	}
	name := p.s[start:p.i]
	if name == "" {
		return nil, fmt.Errorf("missing attribute type")
	}
	up := strings.ToUpper(name)
	if oid, ok := dnKeywords[up]; ok {
		return oid, nil
	}
	return parseOID(strings.TrimPrefix(up, "OID."))
}

func isTypeChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
}

func parseOID(s string) (asn1.ObjectIdentifier, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return nil, fmt.Errorf("unknown attribute type %q", truncate(s, 40))
	}
	oid := make(asn1.ObjectIdentifier, len(parts))
	for i, part := range parts {
		n := 0
		if part == "" || len(part) > 9 || (len(part) > 1 && part[0] == '0') {
			return nil, fmt.Errorf("bad OID %q", truncate(s, 40))
		}
		for _, c := range []byte(part) {
			if c < '0' || c > '9' {
				return nil, fmt.Errorf("unknown attribute type %q", truncate(s, 40))
			}
			n = n*10 + int(c-'0')
		}
		oid[i] = n
	}
	return oid, nil
}

// hexValue reads "#" hex; a BER string is decoded to its text.
func (p *dnParser) hexValue() (string, bool, error) {
	p.i++
	start := p.i
	for p.i < len(p.s) && isHex(p.s[p.i]) {
		p.i++
	}
	b, err := hex.DecodeString(p.s[start:p.i])
	if err != nil || len(b) == 0 {
		return "", false, fmt.Errorf("bad hex value")
	}
	var v any
	if rest, err := asn1.Unmarshal(b, &v); err == nil && len(rest) == 0 {
		if s, ok := v.(string); ok {
			return s, false, nil
		}
	}
	return hex.EncodeToString(b), true, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (p *dnParser) quotedValue() (string, error) {
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case '"':
			p.i++
			return b.String(), nil
		case '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", fmt.Errorf("unterminated quoted value")
}

// plainValue reads up to an unescaped separator; unescaped trailing spaces
// are dropped.
func (p *dnParser) plainValue() (string, error) {
	var b strings.Builder
	keep := 0
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case ',', ';', '+':
			return b.String()[:keep], nil
		case '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
			keep = b.Len()
		default:
			b.WriteByte(c)
			p.i++
			if c != ' ' {
				keep = b.Len()
			}
		}
	}
	return b.String()[:keep], nil
}

// escape reads "\c" or "\hh" at p.i.
func (p *dnParser) escape(b *strings.Builder) error {
	if p.i+1 >= len(p.s) {
		return fmt.Errorf("dangling escape")
	}
	if p.i+2 < len(p.s) && isHex(p.s[p.i+1]) && isHex(p.s[p.i+2]) {
		v, _ := hex.DecodeString(p.s[p.i+1 : p.i+3])
		b.WriteByte(v[0])
		p.i += 3
		return nil
	}
	c := p.s[p.i+1]
	if !strings.ContainsRune(" \"#+,;<>=\\", rune(c)) {
		return fmt.Errorf("bad escape %q", c)
	}
	b.WriteByte(c)
	p.i += 2
	return nil
}

// String formats the DN per RFC 4514.
func (d DN) String() string {
	var b strings.Builder
	for i, rdn := range d {
		if i > 0 {
			b.WriteByte(',')
		}
		for j, a := range rdn {
			if j > 0 {
				b.WriteByte('+')
			}
			b.WriteString(typeName(a.Type))
			b.WriteByte('=')
			if a.Raw {
				b.WriteByte('#')
				b.WriteString(a.Value)
			} else {
				escapeValue(&b, a.Value)
			}
		}
	}
	return b.String()
}

func typeName(oid asn1.ObjectIdentifier) string {
	s := oid.String()
	if n, ok := dnNames[s]; ok {
		return n
	}
	return s
}

func escapeValue(b *strings.Builder, v string) {
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRuneInString(v[i:])
		c := v[i]
		switch {
		case r == utf8.RuneError && size <= 1, c < 0x20, c == 0x7f:
			fmt.Fprintf(b, "\\%02x", c)
		case strings.IndexByte("\"+,;<>\\", c) >= 0,
			(c == '#' || c == ' ') && i == 0,
			c == ' ' && i == len(v)-1:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteString(v[i : i+size])
		}
		i += size
	}
}

// DNFromRaw decodes a DER Name (Certificate.RawSubject or RawIssuer).
func DNFromRaw(der []byte) (DN, error) {
	var seq []asn1.RawValue
	if rest, err := asn1.Unmarshal(der, &seq); err != nil || len(rest) != 0 {
		return nil, fmt.Errorf("crypto: DER name: %w", ErrBadDN)
	}
	dn := make(DN, len(seq))
	for i, set := range seq {
		rdn, err := rdnFromRaw(set.FullBytes)
		if err != nil {
			return nil, err
		}
		dn[len(seq)-1-i] = rdn
	}
	return dn, nil
}

func rdnFromRaw(der []byte) (RDN, error) {
	var atvs []struct {
		Type  asn1.ObjectIdentifier
		Value asn1.RawValue
	}
	if rest, err := asn1.UnmarshalWithParams(der, &atvs, "set"); err != nil || len(rest) != 0 {
		return nil, fmt.Errorf("crypto: DER RDN: %w", ErrBadDN)
	}
	rdn := make(RDN, len(atvs))
	for i, atv := range atvs {
		rdn[i] = AVA{Type: atv.Type, Value: hex.EncodeToString(atv.Value.FullBytes), Raw: true}
		var v any
		if _, err := asn1.Unmarshal(atv.Value.FullBytes, &v); err == nil {
			if s, ok := v.(string); ok {
				rdn[i] = AVA{Type: atv.Type, Value: s}
			}
		}
	}
	return rdn, nil
}

// Equal compares two DNs by attribute type and value, RDN by RDN, ignoring
// the order of AVAs inside an RDN, case and runs of white space in values.
// It is the rule; the engines compare through CertKeys and IssuerName,
// which keep the canonical form it compares (the tests hold them to it).
func (d DN) Equal(o DN) bool { return d.canonical() == o.canonical() }

// canonical is a normalized RFC 4514 form usable as a map key.
func (d DN) canonical() string {
	c := make(DN, len(d))
	for i, rdn := range d {
		r := make(RDN, len(rdn))
		for j, a := range rdn {
			r[j] = AVA{Type: a.Type, Value: foldValue(a), Raw: a.Raw}
		}
		slices.SortFunc(r, func(x, y AVA) int {
			return strings.Compare(x.Type.String()+"="+x.Value, y.Type.String()+"="+y.Value)
		})
		c[i] = r
	}
	return c.String()
}

func foldValue(a AVA) string {
	if a.Raw {
		return a.Value
	}
	return strings.ToLower(strings.Join(strings.Fields(a.Value), " "))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

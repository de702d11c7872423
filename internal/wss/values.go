package wss

import (
	"encoding/base64"
	"slices"
	"time"

	simd "github.com/segmentio/asm/base64"
)

// strictBase64 is made once: Strict returns the Encoding by value, and a
// copy per call escapes to the heap (1 KiB a message). It is segmentio/asm's
// decoder: an AVX2 kernel for runs of 32 characters of the alphabet (from
// 45 characters on, so a SignatureValue, not a DigestValue), stopping at
// any other byte, and encoding/base64's strict decoder for the rest (line
// ends, padding and its trailing bits), so it decodes and refuses exactly
// what encoding/base64 does (FuzzBase64Decoder); a 4 KiB hit's
// SignatureValue took 0.5 µs on the scalar decoder (issue 14).
var strictBase64 = simd.StdEncoding.Strict()

// DecodeBase64 decodes base64 element content, the same for both engines.
// XML Signature's base64 (RFC 2045) allows white space anywhere, so it is
// dropped first; nothing else is tolerated (no padding tricks: StdEncoding
// is strict about trailing bits).
func DecodeBase64[T ~string | ~[]byte](s T) ([]byte, error) {
	if b, ok := any(s).([]byte); ok {
		// The common case: no white space but line ends, which the decoder
		// skips itself. Anything else takes the path below.
		out := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
		if n, err := strictBase64.Decode(out, b); err == nil && n > 0 {
			return out[:n], nil
		}
	}
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			clean = append(clean, c)
		}
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(clean)))
	n, err := strictBase64.Decode(out, clean)
	if err != nil || len(clean) == 0 {
		return nil, Failf(ReasonMalformed, "bad base64")
	}
	return out[:n], nil
}

// AppendBase64 appends the octets of base64 text b to dst, as
// DecodeBase64 decodes them, without allocating when dst has room: the
// template path decodes DigestValues into a scratch buffer it keeps
// (issue 14).
func AppendBase64(dst, b []byte) ([]byte, error) {
	n := base64.StdEncoding.DecodedLen(len(b))
	dst = slices.Grow(dst, n)
	if len(b) <= maxShortBase64 {
		if out, ok := appendShortBase64(dst, b); ok {
			return out, nil
		}
	}
	if m, err := strictBase64.Decode(dst[len(dst):len(dst)+n], b); err == nil && m > 0 {
		return dst[:len(dst)+m], nil
	}
	v, err := DecodeBase64(b)
	if err != nil {
		return dst, err
	}
	return append(dst, v...), nil
}

// maxShortBase64 is the longest text appendShortBase64 takes: a SHA-512
// DigestValue.
const maxShortBase64 = 88

// base64Values maps a character of the standard alphabet to its six bits,
// anything else (padding, white space) to 0xff.
var base64Values = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	return t
}()

// appendShortBase64 decodes a short value in its plain form, whole
// quanta of the alphabet with the padding at the end and zero trailing
// bits, into dst's room (AppendBase64 grew it); ok false for any other
// text, which the strict decoder then decodes or refuses. A DigestValue is
// 44 characters, below the vector decoder's threshold, and
// encoding/base64's loop took several hundred instructions for it; a 4
// KiB hit decodes two (issue 14). FuzzDecodeBase64 holds it to the strict
// decoder.
func appendShortBase64(dst, b []byte) ([]byte, bool) {
	n := len(b)
	if n == 0 || n%4 != 0 {
		return dst, false
	}
	pad := 0
	if b[n-1] == '=' {
		pad = 1
		if b[n-2] == '=' {
			pad = 2
		}
	}
	var bad byte
	for i := 0; i < n-4; i += 4 {
		v0, v1, v2, v3 := base64Values[b[i]], base64Values[b[i+1]], base64Values[b[i+2]], base64Values[b[i+3]]
		bad |= v0 | v1 | v2 | v3
		dst = append(dst, v0<<2|v1>>4, v1<<4|v2>>2, v2<<6|v3)
	}
	v0, v1 := base64Values[b[n-4]], base64Values[b[n-3]]
	bad |= v0 | v1
	switch pad {
	case 0:
		v2, v3 := base64Values[b[n-2]], base64Values[b[n-1]]
		bad |= v2 | v3
		dst = append(dst, v0<<2|v1>>4, v1<<4|v2>>2, v2<<6|v3)
	case 1:
		v2 := base64Values[b[n-2]]
		bad |= v2
		if v2&0x03 != 0 { // non-zero trailing bits: Strict refuses them
			return dst, false
		}
		dst = append(dst, v0<<2|v1>>4, v1<<4|v2>>2)
	default:
		if v1&0x0f != 0 {
			return dst, false
		}
		dst = append(dst, v0<<2|v1>>4)
	}
	return dst, bad&0xc0 == 0
}

// ParseDateTime parses an xsd:dateTime that must be in UTC with a literal Z
// (BSP R3217): YYYY-MM-DDThh:mm:ss[.fraction]Z. Offsets, missing zones,
// leap seconds, signs and years beyond four digits are refused.
//
// The fields sit at fixed offsets, so they are read there, and the instant
// is computed from the civil date (daysFromCivil) rather than by time.Date,
// which normalizes every field first: a template hit parses the
// Timestamp's two on every message (issue 14). FuzzParseDateTime holds it
// to time.Parse.
func ParseDateTime[T ~string | ~[]byte](v T) (time.Time, error) {
	const base = len("2006-01-02T15:04:05")
	if len(v) < base+1 || len(v) > base+11 || v[len(v)-1] != 'Z' ||
		v[4] != '-' || v[7] != '-' || v[10] != 'T' || v[13] != ':' || v[16] != ':' {
		return time.Time{}, badDateTime()
	}
	d := [...]byte{v[0] - '0', v[1] - '0', v[2] - '0', v[3] - '0', v[5] - '0', v[6] - '0', v[8] - '0', v[9] - '0',
		v[11] - '0', v[12] - '0', v[14] - '0', v[15] - '0', v[17] - '0', v[18] - '0'}
	for _, c := range d {
		if c > 9 { // a byte below '0' wrapped around
			return time.Time{}, badDateTime()
		}
	}
	year := int(d[0])*1000 + int(d[1])*100 + int(d[2])*10 + int(d[3])
	month, day := int(d[4])*10+int(d[5]), int(d[6])*10+int(d[7])
	hour, minute, sec := int(d[8])*10+int(d[9]), int(d[10])*10+int(d[11]), int(d[12])*10+int(d[13])
	nsec, ok := fraction(v[base : len(v)-1])
	if !ok || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, badDateTime()
	}
	unix := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+sec)
	return time.Unix(unix, int64(nsec)).UTC(), nil
}

// daysFromCivil is the number of days from 1970-01-01 to the given date of
// the proleptic Gregorian calendar (H. Hinnant, chrono-compatible low-level
// date algorithms), for years 0 to 9999: the year is shifted by 400 so that
// every division is of a non-negative number.
func daysFromCivil(year, month, day int) int64 {
	y := year + 400 // a 400-year cycle later, whose days are subtracted back
	if month <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400                             // [0, 399]
	doy := (153*((month+9)%12)+2)/5 + day - 1      // [0, 365], from March 1st
	doe := yoe*365 + yoe/4 - yoe/100 + doy         // [0, 146096]
	return int64(era*146097+doe) - 719468 - 146097 // 719468: days from 0000-03-01 to 1970-01-01
}

func badDateTime() error { return Failf(ReasonTimestamp, "not an xsd:dateTime in UTC") }

// fraction parses "" or "." and one to nine digits as nanoseconds.
func fraction[T ~string | ~[]byte](frac T) (int, bool) {
	if len(frac) == 0 {
		return 0, true
	}
	if len(frac) < 2 || frac[0] != '.' {
		return 0, false
	}
	n, scale := 0, 1_000_000_000
	for i := 1; i < len(frac); i++ {
		c := frac[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		scale /= 10
		n += int(c-'0') * scale
	}
	return n, true
}

// daysIn is the length of a month of the proleptic Gregorian calendar.
func daysIn(year, month int) int {
	if month == 2 {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 31 - (month-1)%7%2
}

// CheckTimestamp checks a Timestamp's values against the policy's window.
func (p *Policy) CheckTimestamp(ts *Timestamp, now time.Time) error {
	if !ts.Expires.IsZero() && !ts.Expires.After(ts.Created) {
		return Failf(ReasonTimestamp, "Expires is not after Created")
	}
	tp := p.Config.Timestamp
	switch {
	case ts.Expires.IsZero() && tp.RequireExpires:
		return Failf(ReasonTimestamp, "no Expires")
	case ts.Created.After(now.Add(tp.FutureSkew)):
		return Failf(ReasonTimestamp, "Created is in the future")
	case now.Sub(ts.Created) > tp.MaxAge:
		return Failf(ReasonTimestamp, "Created is older than %s", tp.MaxAge)
	case !ts.Expires.IsZero() && !now.Before(ts.Expires.Add(tp.FutureSkew)):
		return Failf(ReasonTimestamp, "expired")
	}
	return nil
}

// CheckUsernameCreated checks a UsernameToken's Created against the window.
func (p *Policy) CheckUsernameCreated(created, now time.Time) error {
	if created.After(now.Add(p.Config.Timestamp.FutureSkew)) || now.Sub(created) > p.Config.UsernameToken.MaxAge {
		return Failf(ReasonTimestamp, "UsernameToken Created out of window")
	}
	return nil
}

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
	if m, err := strictBase64.Decode(dst[len(dst):len(dst)+n], b); err == nil && m > 0 {
		return dst[:len(dst)+m], nil
	}
	v, err := DecodeBase64(b)
	if err != nil {
		return dst, err
	}
	return append(dst, v...), nil
}

// ParseDateTime parses an xsd:dateTime that must be in UTC with a literal Z
// (BSP R3217): YYYY-MM-DDThh:mm:ss[.fraction]Z. Offsets, missing zones,
// leap seconds, signs and years beyond four digits are refused.
func ParseDateTime[T ~string | ~[]byte](v T) (time.Time, error) {
	const base = len("2006-01-02T15:04:05")
	if len(v) < base+1 || len(v) > base+11 || v[len(v)-1] != 'Z' {
		return time.Time{}, badDateTime()
	}
	var f [6]int // year, month, day, hour, minute, second
	k := 0
	for i := range base {
		c, want := v[i], "dddd-dd-ddTdd:dd:dd"[i]
		switch {
		case want == 'd' && c >= '0' && c <= '9':
			f[k] = f[k]*10 + int(c-'0')
		case want != 'd' && c == want:
			k++
		default:
			return time.Time{}, badDateTime()
		}
	}
	nsec, ok := fraction(v[base : len(v)-1])
	if !ok || f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > daysIn(f[0], f[1]) || f[3] > 23 || f[4] > 59 || f[5] > 59 {
		return time.Time{}, badDateTime()
	}
	return time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], nsec, time.UTC), nil
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

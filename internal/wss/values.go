package wss

import (
	"encoding/base64"
	"time"
)

// DecodeBase64 decodes base64 element content, the same for both engines.
// XML Signature's base64 (RFC 2045) allows white space anywhere, so it is
// dropped first; nothing else is tolerated (no padding tricks: StdEncoding
// is strict about trailing bits).
func DecodeBase64[T ~string | ~[]byte](s T) ([]byte, error) {
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			clean = append(clean, c)
		}
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(clean)))
	n, err := base64.StdEncoding.Strict().Decode(out, clean)
	if err != nil || len(clean) == 0 {
		return nil, Failf(ReasonMalformed, "bad base64")
	}
	return out[:n], nil
}

// ParseDateTime parses an xsd:dateTime that must be in UTC with a literal Z
// (BSP R3217): YYYY-MM-DDThh:mm:ss[.fraction]Z. Offsets, missing zones,
// leap seconds, signs and years beyond four digits are refused.
func ParseDateTime[T ~string | ~[]byte](v T) (time.Time, error) {
	s := string(v)
	const base = len("2006-01-02T15:04:05")
	bad := Failf(ReasonTimestamp, "not an xsd:dateTime in UTC")
	if len(s) < base+1 || len(s) > base+11 || s[len(s)-1] != 'Z' {
		return time.Time{}, bad
	}
	for k, c := range []byte(s[:base]) {
		want := "dddd-dd-ddTdd:dd:dd"[k]
		if (want == 'd' && (c < '0' || c > '9')) || (want != 'd' && c != want) {
			return time.Time{}, bad
		}
	}
	frac := s[base : len(s)-1]
	if frac != "" {
		if len(frac) < 2 || frac[0] != '.' {
			return time.Time{}, bad
		}
		for _, c := range []byte(frac[1:]) {
			if c < '0' || c > '9' {
				return time.Time{}, bad
			}
		}
	}
	t, err := time.Parse("2006-01-02T15:04:05"+fracLayout(frac)+"Z07:00", s)
	if err != nil {
		return time.Time{}, bad
	}
	return t.UTC(), nil
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

func fracLayout(frac string) string {
	if frac == "" {
		return ""
	}
	b := []byte(".")
	for range len(frac) - 1 {
		b = append(b, '9')
	}
	return string(b)
}

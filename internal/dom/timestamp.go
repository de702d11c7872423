package dom

import (
	"time"

	"github.com/wssgw/wssgw/internal/wss"
)

// timestamp checks a wsu:Timestamp: at most one (BSP R3227), exactly one
// Created first (R3203), an optional Expires after it (R3224), nothing else
// (R3222), values in UTC (R3217) with seconds below 60 (R3213), and the
// policy's window.
func (m *message) timestamp(i int) error {
	if m.res.Timestamp != nil {
		return wss.Failf(wss.ReasonTimestamp, "two Timestamps")
	}
	kids := m.children(i)
	if len(kids) == 0 || len(kids) > 2 || !m.is(kids[0], nsWSU, "Created") {
		return wss.Failf(wss.ReasonTimestamp, "Timestamp must hold Created and optionally Expires")
	}
	created, err := parseDateTime(m.text(kids[0]))
	if err != nil {
		return wss.Wrap(wss.ReasonTimestamp, err, "Created")
	}
	ts := &wss.Timestamp{Start: m.start(i), Created: created}
	if len(kids) == 2 {
		if !m.is(kids[1], nsWSU, "Expires") {
			return wss.Failf(wss.ReasonTimestamp, "unexpected %s in Timestamp", m.name(kids[1]))
		}
		if ts.Expires, err = parseDateTime(m.text(kids[1])); err != nil {
			return wss.Wrap(wss.ReasonTimestamp, err, "Expires")
		}
		if !ts.Expires.After(ts.Created) {
			return wss.Failf(wss.ReasonTimestamp, "Expires is not after Created")
		}
	}
	tp := m.p.Config.Timestamp
	switch {
	case ts.Expires.IsZero() && tp.RequireExpires:
		return wss.Failf(wss.ReasonTimestamp, "no Expires")
	case created.After(m.now.Add(tp.FutureSkew)):
		return wss.Failf(wss.ReasonTimestamp, "Created is in the future")
	case m.now.Sub(created) > tp.MaxAge:
		return wss.Failf(wss.ReasonTimestamp, "Created is older than %s", tp.MaxAge)
	case !ts.Expires.IsZero() && !m.now.Before(ts.Expires.Add(tp.FutureSkew)):
		return wss.Failf(wss.ReasonTimestamp, "expired")
	}
	m.res.Timestamp = ts
	return nil
}

// parseDateTime parses an xsd:dateTime that must be in UTC with a literal Z
// (BSP R3217): YYYY-MM-DDThh:mm:ss[.fraction]Z. Offsets, missing zones,
// leap seconds, signs and years beyond four digits are refused.
func parseDateTime(s string) (time.Time, error) {
	const base = len("2006-01-02T15:04:05")
	bad := wss.Failf(wss.ReasonTimestamp, "not an xsd:dateTime in UTC")
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

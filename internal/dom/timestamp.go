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
	}
	if err := m.p.CheckTimestamp(ts, m.now); err != nil {
		return err
	}
	m.res.Timestamp = ts
	return nil
}

// parseDateTime is wss.ParseDateTime: both engines read dates the same way.
func parseDateTime(s string) (time.Time, error) { return wss.ParseDateTime(s) }

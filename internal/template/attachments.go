package template

import (
	"time"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/wss"
)

// ProcessAttachments is wss.AttachmentEngine: the root part data of an
// MTOM package is matched like a plain message against the templates
// learned from packages' roots, its xop:Includes resolved against atts
// and the included parts streamed into the digests (xop.go); a miss goes
// to the DOM engine, which teaches the store. An SwA package goes to the
// DOM engine without a lookup: its lookup is counted as not_applicable
// (or disabled when the policy has no store), not as a miss, so that a
// route carrying SwA by design does not look like one whose partner
// changed its message shape (WssgwTemplateMissRateHigh).
func (e *Engine) ProcessAttachments(data []byte, atts wss.Attachments, p *wss.Policy, now time.Time) (*wss.Result, error) {
	if !e.applies(data, p) || !swaPackage(data, atts) {
		return e.process(data, atts, p, now)
	}
	res, err := e.dom.ProcessAttachments(data, atts, p, now)
	if err != nil {
		// Only the lookup of a rejected package is counted, as in slow.
		return &wss.Result{Lookup: metrics.LookupNotApplicable}, err
	}
	res.Lookup = metrics.LookupNotApplicable
	return res, nil
}

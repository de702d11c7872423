package template

import (
	"time"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/wss"
)

// ProcessAttachments is wss.AttachmentEngine: an MTOM/SwA package always
// goes to the DOM engine. Templates are learned over whole messages of
// bytes; an XOP root's Body digest covers attachment content streamed in
// from outside the root (XOP 1.0 §3.2), which no template slot describes,
// so no template can match it. The lookup is counted as not_applicable (or
// disabled when the policy has no store), not as a miss: a route carrying
// MTOM by design must not look like one whose partner changed its message
// shape (WssgwTemplateMissRateHigh, issue 16). Nothing is learned from it.
func (e *Engine) ProcessAttachments(data []byte, atts wss.Attachments, p *wss.Policy, now time.Time) (*wss.Result, error) {
	lookup := metrics.LookupNotApplicable
	if e.store == nil || p != e.store.policy {
		lookup = metrics.LookupDisabled
	}
	res, err := e.dom.ProcessAttachments(data, atts, p, now)
	if err != nil {
		// Only the lookup of a rejected package is counted, as in slow.
		return &wss.Result{Lookup: lookup}, err
	}
	res.Lookup = lookup
	return res, nil
}

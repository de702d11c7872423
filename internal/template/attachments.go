package template

import (
	"time"

	"github.com/wssgw/wssgw/internal/wss"
)

// ProcessAttachments is wss.AttachmentEngine: the root part data of an
// MTOM or SwA package is matched like a plain message against the
// templates learned from packages' roots, its xop:Includes and SwA
// References resolved against atts and the parts streamed into the
// digests (xop.go, swa.go), an encrypted Body's CipherValues read from
// their parts (xop_enc.go); a miss goes to the DOM engine, which teaches
// the store. A package the template path does not describe (encrypted
// headers, attachments encrypted: learnablePackage) is counted as
// not_applicable, not as a miss, so that a route carrying it by design
// does not look like one whose partner changed its message shape
// (WssgwTemplateMissRateHigh).
func (e *Engine) ProcessAttachments(data []byte, atts wss.Attachments, p *wss.Policy, now time.Time) (*wss.Result, error) {
	return e.process(data, atts, p, now)
}

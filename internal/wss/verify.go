package wss

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Engine proves facts about a message: the DOM engine, and the template
// automaton that must give the same Result for the same bytes.
type Engine interface {
	Process(data []byte, p *Policy, now time.Time) (*Result, error)
}

// Verify is the whole security stage for one message, the same for the
// gateway and `wssgw verify`: engine, then policy check and replay store.
// It returns the bytes to forward. res is nil when the message was forwarded
// unparsed, and may be non-nil with an error when the policy check failed
// (its facts are still worth counting). Every error is an *Error.
func (p *Policy) Verify(ctx context.Context, e Engine, data []byte, now time.Time) (res *Result, forward []byte, err error) {
	if p.unsecured(data) {
		return nil, data, nil
	}
	res, err = e.Process(data, p, now)
	return p.finish(ctx, res, err, now, false)
}

// VerifyOwned is Verify for a caller that hands data over (the gateway,
// which read it for this one request): forward is data itself with what
// is left out cut in place, not a copy (Result.forward). Neither
// data nor the result's Document and offsets may be read afterwards; the
// result's other facts stay valid.
func (p *Policy) VerifyOwned(ctx context.Context, e Engine, data []byte, now time.Time) (res *Result, forward []byte, err error) {
	if p.unsecured(data) {
		return nil, data, nil
	}
	res, err = e.Process(data, p, now)
	return p.finish(ctx, res, err, now, true)
}

// unsecured is seed 004: a policy that requires nothing forwards messages
// that carry no WS-Security without parsing them.
func (p *Policy) unsecured(data []byte) bool {
	return len(p.Config.Require) == 0 && !bytes.Contains(data, []byte(xmlscan.NamespaceWSSE))
}

// finish checks an engine's result against the policy and the replay
// store, for Verify and VerifyAttachments.
func (p *Policy) finish(ctx context.Context, res *Result, err error, now time.Time, inPlace bool) (*Result, []byte, error) {
	if err != nil {
		// res may carry how the engine got there (a template hit) but no
		// facts.
		return res, nil, asError(err)
	}
	start := time.Now()
	err = p.Check(ctx, res, now)
	res.PolicyTime = time.Since(start)
	if err != nil {
		return res, nil, asError(err)
	}
	out, stripped := res.forward(p, inPlace)
	res.Stripped = stripped
	return res, out, nil
}

// asError makes every failure a security failure with a reason.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Wrap(ReasonMalformed, err, "engine")
}

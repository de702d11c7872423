package gateway

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/textproto"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/signer"
)

// stream signs an MTOM/SwA response while it passes through (DESIGN.md
// §6). The root part is read and checked here, so that a package that
// cannot be signed still gets a fault; the rest is copied by a goroutine
// into a pipe that the proxy relays, flushing as it goes (ContentLength
// -1). If the copy fails, the pipe fails and the proxy aborts the handler
// (http.ErrAbortHandler): the client sees a cut connection and never a
// signature part or a close delimiter over partial data.
func (rs *responder) stream(rt *route, resp *http.Response, strict bool) error {
	ct := resp.Header.Get("Content-Type")
	lim := streamLimits(rt, rs.cfg.MaxBufferedSize)
	pr, err := wmime.NewPartReader(resp.Body, ct, lim)
	if err != nil {
		resp.Body.Close()
		return rs.unprepared(rt, resp, err)
	}
	o, err := rs.options(requesterOf(resp.Request), strict)
	if err != nil {
		resp.Body.Close()
		return rs.failed(rt, &responseError{err})
	}
	s, err := signer.NewStream(signer.StreamOptions{
		Options: o, Attachments: rs.cfg.Attachments, StrictXOP: strict,
		MaxRootSize: lim.MaxRootSize, MaxAttachments: lim.MaxParts,
	})
	if err == nil {
		err = s.Prepare(&mimeParts{pr: pr})
	}
	if err != nil {
		resp.Body.Close()
		return rs.unprepared(rt, resp, err)
	}
	outType, err := withBoundary(ct, s.Boundary())
	if err != nil {
		resp.Body.Close()
		return rs.failed(rt, &responseError{err})
	}
	pipeR, pipeW := io.Pipe()
	go rs.send(rt, s, resp.Body, pipeW, resp.Request.Header.Get(HeaderRequestID))
	resp.Body = pipeR
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	resp.Header.Set("Content-Type", outType)
	return nil
}

// unprepared is the error for a streamed response whose root part could
// not be read and checked: a backend whose body stalled meanwhile failed
// itself (504 backend_stalled), the package is not one that cannot be
// signed.
func (rs *responder) unprepared(rt *route, resp *http.Response, err error) error {
	if b, ok := resp.Body.(*idleBody); ok && b.stalled.Load() {
		return &backendError{fmt.Errorf("%w: %w", errBackendStalled, err)}
	}
	return rs.failed(rt, &responseError{err})
}

// send copies the signed package into the pipe the proxy reads.
func (rs *responder) send(rt *route, s *signer.Stream, backend io.ReadCloser, w *io.PipeWriter, id string) {
	start := time.Now()
	err := s.Send(w)
	backend.Close()
	if err != nil {
		// A client that went away closed the pipe: that is not a signing
		// failure, and the proxy records it.
		if !errors.Is(err, io.ErrClosedPipe) {
			rs.count(rt, metrics.ResponseAborted)
			rs.log.Warn("streamed response aborted before its signature", "id", id, "route", rt.name, "error", err)
		}
		w.CloseWithError(err)
		return
	}
	rt.metrics.Stage(metrics.StageSign, s.SignTime())
	rs.count(rt, metrics.ResponseSigned)
	rs.log.Debug("streamed response signed", "id", id, "route", rt.name, "duration_ms", float64(time.Since(start).Microseconds())/1e3)
	w.Close()
}

// streamLimits bound a streamed response by the configured mime limits
// (parts, header block, one attachment, the whole package), the limits the
// route's requests get, so that an operator who raises mime.maxPartSize for
// large packages raises it both ways; the root part, held in memory for
// signing, is bounded by responses.maxBufferedSize like a buffered response.
func streamLimits(rt *route, maxBuffered config.ByteSize) wmime.Limits {
	lim := wmime.DefaultLimits()
	if rt.security != nil {
		lim = rt.security.mime
	}
	lim.MaxRootSize = int64(maxBuffered)
	return lim
}

// withBoundary is the package's Content-Type with the boundary of the
// package as re-written; type, start and start-info stay.
func withBoundary(ct, boundary string) (string, error) {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", fmt.Errorf("Content-Type %q: %w", ct, err)
	}
	params["boundary"] = boundary
	out := mime.FormatMediaType(mt, params)
	if out == "" {
		return "", fmt.Errorf("Content-Type %q cannot be re-written", ct)
	}
	return out, nil
}

// mimeParts adapts internal/mime's streaming reader to signer.Parts.
type mimeParts struct {
	pr *wmime.PartReader
	n  int
}

func (m *mimeParts) Next() (textproto.MIMEHeader, io.Reader, error) {
	sp, err := m.pr.Next()
	if err != nil {
		return nil, nil, err
	}
	m.n++
	if m.n == 1 && !sp.Root {
		// The root goes out first with the Security header; a package
		// whose start part comes later would need it buffered.
		return nil, nil, fmt.Errorf("%w: the root part is not the first part", signer.ErrPackage)
	}
	return sp.Header, sp, nil
}

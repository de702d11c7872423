package signer

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// Copy buffers of streamed attachments. 256 KiB pieces keep the reads,
// the writes and the proxy's flush after each write (ReverseProxy flushes
// every write of a body of unknown length) at a few syscalls per 256 KiB;
// pipeDepth of them let the digest of one piece run on another core while
// the next is read and the previous one written. A response in flight
// holds pipeDepth*pipeBufSize bytes, whatever its size.
const (
	pipeBufSize = 256 << 10
	pipeDepth   = 4
)

var pipeBufs = sync.Pool{New: func() any { b := make([]byte, pipeBufSize); return &b }}

// errDigestStopped ends the copy when the digester has failed; the
// digester's own error is the one reported.
var errDigestStopped = errors.New("signer: digest failed")

// digestPipe hands the pieces of one attachment to a goroutine that
// digests them while the copy goes on. A buffer goes back to free only
// after the digester is done with it, and the copier takes a buffer from
// free only after its own write of the previous one returned, so a buffer
// is refilled only when both the write and the digest of its last piece
// are done.
type digestPipe struct {
	dig  io.Writer
	work chan piece    // filled pieces, in order, for the digester
	free chan *[]byte  // buffers the digester is done with
	done chan struct{} // closed when the digester has returned
	stop atomic.Bool   // either side failed: the digester skips the rest
	err  error         // the digester's first error, read after done
}

// copyDigest copies r to w and writes the same bytes, in order, to dig on
// another goroutine. It returns once dig has seen every byte that w got,
// with the copy's error first, else dig's. On any error the copy stops and
// what dig has seen is incomplete: the caller must not sign it.
func copyDigest(w io.Writer, r io.Reader, dig io.Writer) error {
	p := &digestPipe{
		dig:  dig,
		work: make(chan piece, pipeDepth),
		free: make(chan *[]byte, pipeDepth),
		done: make(chan struct{}),
	}
	for range pipeDepth {
		p.free <- pipeBufs.Get().(*[]byte)
	}
	go p.digest()
	err := p.copy(w, r)
	if err != nil {
		p.stop.Store(true)
	}
	close(p.work)
	<-p.done
	for range pipeDepth {
		pipeBufs.Put(<-p.free)
	}
	if err != nil && err != errDigestStopped {
		return err
	}
	return p.err
}

// copy reads pieces into free buffers, hands each to the digester and
// writes it to w.
func (p *digestPipe) copy(w io.Writer, r io.Reader) error {
	for {
		bp := <-p.free
		if p.stop.Load() {
			p.free <- bp
			return errDigestStopped
		}
		n, rerr := fill(r, *bp)
		if n == 0 {
			p.free <- bp
		} else {
			p.work <- piece{bp, n}
			if _, err := w.Write((*bp)[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// digest writes each piece to dig and recycles its buffer. After a
// failure on either side it only recycles.
func (p *digestPipe) digest() {
	defer close(p.done)
	for pc := range p.work {
		if !p.stop.Load() {
			if _, err := p.dig.Write((*pc.buf)[:pc.n]); err != nil {
				p.err = err
				p.stop.Store(true)
			}
		}
		p.free <- pc.buf
	}
}

// piece is the first n bytes of a pooled buffer.
type piece struct {
	buf *[]byte
	n   int
}

// fill reads into b until it is full or r ends: fewer, larger pieces for
// the writes and the digester. A trickling backend's bytes therefore reach
// the client in pieces of up to len(b); the root part, which carries the
// time to first byte, went out before.
func fill(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

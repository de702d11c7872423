package template

import (
	"encoding/binary"
	"errors"
	"hash"

	"github.com/wssgw/wssgw/internal/crypto"
)

// shaNI is SHA-256 for the fast body where the CPU has the SHA
// extensions and AVX2 (haveSHANI; fastbody_sha.h): the same digest as
// crypto/sha256's, its state kept between blocks in the layout the SHA
// instructions use, so that the sibling kernel can hash whole blocks of
// its output as it writes them (issue 14). Everything else, and every
// other CPU, uses crypto/sha256.
type shaNI struct {
	s  [8]uint32 // F E B A, H G D C (A the most significant word of the first half)
	x  [shaChunk]byte
	nx int
	n  uint64 // bytes written
}

const (
	shaChunk = 64
	// shaMagic and shaMarshaled are crypto/sha256's marshaled state: a
	// template's midstate (midstate.go) is resumed in a shaNI.
	shaMagic     = "sha\x03"
	shaMarshaled = len(shaMagic) + 8*4 + shaChunk + 8
)

// shaInit is SHA-256's initial state (FIPS 180-4 §5.3.3) in shaNI's
// layout.
var shaInit = shaLayout([8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19})

// shaLayout puts the words A to H in the SHA-NI layout.
func shaLayout(h [8]uint32) [8]uint32 {
	return [8]uint32{h[5], h[4], h[1], h[0], h[7], h[6], h[3], h[2]}
}

// shaWords is shaLayout undone.
func shaWords(s *[8]uint32) [8]uint32 {
	return [8]uint32{s[3], s[2], s[7], s[6], s[1], s[0], s[5], s[4]}
}

func (d *shaNI) Reset() {
	d.s, d.nx, d.n = shaInit, 0, 0
}

func (d *shaNI) Size() int      { return 32 }
func (d *shaNI) BlockSize() int { return shaChunk }

func (d *shaNI) Write(p []byte) (int, error) {
	n := len(p)
	d.n += uint64(n)
	if d.nx > 0 {
		c := copy(d.x[d.nx:], p)
		d.nx += c
		p = p[c:]
		if d.nx < shaChunk {
			return n, nil
		}
		shaNIBlocks(&d.s, &d.x[0], 1)
		d.nx = 0
	}
	if b := len(p) / shaChunk; b > 0 {
		shaNIBlocks(&d.s, &p[0], b)
		p = p[b*shaChunk:]
	}
	d.nx = copy(d.x[:], p)
	return n, nil
}

// Sum appends the digest of what was written to b (FIPS 180-4 §5.1.1's
// padding on a copy: d goes on as it is).
func (d *shaNI) Sum(b []byte) []byte {
	c := *d
	var pad [shaChunk + 8]byte
	pad[0] = 0x80
	k := (55 - c.n) % 64 // zeros after 0x80 up to 56 mod 64
	binary.BigEndian.PutUint64(pad[1+k:], c.n<<3)
	c.Write(pad[:1+k+8])
	h := shaWords(&c.s)
	for _, w := range h {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b
}

// UnmarshalBinary takes crypto/sha256's marshaled state.
func (d *shaNI) UnmarshalBinary(b []byte) error {
	if len(b) != shaMarshaled || string(b[:len(shaMagic)]) != shaMagic {
		return errors.New("template: not a SHA-256 state")
	}
	b = b[len(shaMagic):]
	var h [8]uint32
	for k := range h {
		h[k] = binary.BigEndian.Uint32(b[4*k:])
	}
	d.s = shaLayout(h)
	b = b[32:]
	copy(d.x[:], b)
	d.n = binary.BigEndian.Uint64(b[shaChunk:])
	d.nx = int(d.n % shaChunk)
	return nil
}

// fastDigest is resume for the fast body's digest: r's shaNI for
// SHA-256 where the CPU has SHA-NI, which the sibling kernel hashes
// into as it goes (fastbody_kern.go).
func (r *run) fastDigest(alg string, m *midstate) (hash.Hash, int, error) {
	if !haveSHANI || alg != crypto.AlgDigestSHA256 {
		return r.resume(alg, m)
	}
	d := &r.sha
	if m != nil && d.UnmarshalBinary(m.state) == nil {
		return d, m.n, nil
	}
	d.Reset()
	return d, 0, nil
}

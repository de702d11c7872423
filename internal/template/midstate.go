package template

import (
	"encoding"
	"hash"

	"github.com/wssgw/wssgw/internal/crypto"
)

// A canonical form starts with literal bytes: a SignedInfo's first few
// hundred (its CanonicalizationMethod, SignatureMethod, the first
// Reference's start tag), a Timestamp's or a Body's start tag up to its
// Id. Their digest state after the whole blocks among them is the same for
// every message a template matches, so it is computed once, when the
// template is learned, and a hit resumes from it: 4 of the 16 blocks of a
// 4 KiB hit's SignedInfo digest, 1 of its Timestamp's 5 (issue 14). The floor in
// bench_test.go hashes every byte: it stands for a verifier that has no
// template.

// midstate is a digest's state after the first n bytes of a canonical
// form, all literal, n a whole number of blocks.
type midstate struct {
	n     int
	state []byte // encoding.BinaryMarshaler's form
}

// newMidstate returns digest alg's state after the whole blocks of the
// literal bytes that start the canonical form ps, nil when they are less
// than a block or the digest cannot be resumed.
func (t *Template) newMidstate(alg string, ps []piece) *midstate {
	var prefix []byte
	for _, p := range ps {
		prefix = append(prefix, t.lit(p)...)
		if p.slot != noSlot {
			break
		}
	}
	h, err := crypto.NewDigest(alg)
	if err != nil {
		return nil
	}
	n := len(prefix) / h.BlockSize() * h.BlockSize()
	m, ok := h.(encoding.BinaryMarshaler)
	if n == 0 || !ok {
		return nil
	}
	h.Write(prefix[:n])
	state, err := m.MarshalBinary()
	if err != nil {
		return nil
	}
	return &midstate{n: n, state: state}
}

// size is what a midstate adds to its template.
func (m *midstate) size() int {
	if m == nil {
		return 0
	}
	return len(m.state) + 32
}

// midstates computes the template's midstates: SignedInfo's (SHA-256, the
// replay key's digest, whatever the SignatureMethod), each Reference's
// that is digested from its canonical pieces, the generic Body's start.
func (l *learner) midstates() {
	t := l.t
	for _, s := range t.steps {
		st := s.sig
		if st == nil {
			continue
		}
		st.siMid = t.newMidstate(crypto.AlgDigestSHA256, st.signedInfo)
		for k := range st.refs {
			if rs := &st.refs[k]; !rs.body && !rs.xop && !rs.swa {
				rs.mid = t.newMidstate(rs.digest, rs.canon)
			}
		}
	}
	if ba := t.gbody; ba != nil && ba.ref != nil && len(ba.pre) > 0 {
		ba.preMid = t.newMidstate(ba.ref.digest, ba.pre)
	}
	t.size = t.estimate(0)
}

// midBytes is what the template's midstates hold.
func (t *Template) midBytes() int {
	n := 0
	t.eachMidstate(func(m *midstate) { n += m.size() })
	return n
}

func (t *Template) eachMidstate(f func(*midstate)) {
	for _, s := range t.steps {
		if st := s.sig; st != nil {
			f(st.siMid)
			for k := range st.refs {
				f(st.refs[k].mid)
			}
		}
	}
	if t.gbody != nil {
		f(t.gbody.preMid)
	}
}

// resume returns r's digest for alg, in state m when m is not nil, and how
// many bytes of the canonical form it has hashed.
func (r *run) resume(alg string, m *midstate) (hash.Hash, int, error) {
	h, err := r.digest(alg)
	if err != nil || m == nil {
		return h, 0, err
	}
	if u, ok := h.(encoding.BinaryUnmarshaler); ok && u.UnmarshalBinary(m.state) == nil {
		return h, m.n, nil
	}
	h.Reset()
	return h, 0, nil
}

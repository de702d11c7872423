package template

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
)

// TestMidstates: a learned template resumes the SignedInfo, Timestamp and
// Body digests from states after their literal starts, a hit's
// SignedInfoDigest is still SHA-256 of the whole canonical SignedInfo, and
// the states are used: a wrong one makes the hit fail, never pass.
func TestMidstates(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	learnMsg := f.sign(t, benchEnvelope(5, "Item"), f.rsa, signer.RefBST, f.now, nil)
	_, err := f.engine.Process(learnMsg, f.policy, f.now)
	require.NoError(t, err)
	msg := f.sign(t, benchEnvelope(5, "Item"), f.rsa, signer.RefBST, f.now, nil)
	tp, caps := f.match(t, msg)
	st := sigOf(tp)

	t.Run("ok/learned", func(t *testing.T) {
		require.NotNil(t, st.siMid, "SignedInfo")
		require.GreaterOrEqual(t, st.siMid.n, 64)
		refs := 0
		for _, rs := range st.refs {
			if !rs.body {
				require.NotNil(t, rs.mid, "the Timestamp's Reference")
				refs++
			}
		}
		require.Equal(t, 1, refs)
		require.NotNil(t, tp.gbody.preMid, "the Body's start tag")
		require.Equal(t, tp.estimate(0), tp.size, "the size counts the midstates")
	})

	t.Run("ok/digest of the whole SignedInfo", func(t *testing.T) {
		for range genericShadowHits + 1 {
			res, err := f.engine.Process(msg, f.policy, f.now)
			require.NoError(t, err)
			require.Equal(t, metrics.LookupHit, res.Lookup)
			r := &run{t: tp, data: msg, caps: caps}
			require.Equal(t, sha256.Sum256(r.canon(nil, st.signedInfo)), res.Signatures[0].SignedInfoDigest)
		}
	})

	t.Run("fail/tampered after the midstate", func(t *testing.T) {
		// The Timestamp's Expires lies past its Reference's midstate: a
		// changed second is a digest failure.
		i := bytes.Index(msg, []byte("Expires>")) + len("Expires>") + 18
		bad := bytes.Clone(msg)
		bad[i] = '0' + (bad[i]-'0'+1)%6
		_, err := f.engine.Process(bad, f.policy, f.now)
		require.Error(t, err)
	})

	for name, m := range map[string]*midstate{"SignedInfo": st.siMid, "Body": tp.gbody.preMid} {
		t.Run("fail/wrong "+name+" state", func(t *testing.T) {
			saved := bytes.Clone(m.state)
			defer copy(m.state, saved)
			m.state[5] ^= 1 // a byte of the chaining value (the block buffer is empty)
			_, err := f.engine.Process(msg, f.policy, f.now)
			require.Error(t, err, "a wrong state must fail the hit")
			copy(m.state, saved)
			_, err = f.engine.Process(msg, f.policy, f.now)
			require.NoError(t, err)
		})
	}

	t.Run("fail/no state", func(t *testing.T) {
		short := &Template{lits: lits{c: region{own: []byte("<a>")}}}
		require.Nil(t, short.newMidstate(crypto.AlgDigestSHA256, []piece{{off: 0, n: 3, slot: noSlot}}), "less than a block")
		long := &Template{lits: lits{c: region{own: bytes.Repeat([]byte("a"), 200)}}}
		require.Nil(t, long.newMidstate("urn:not-a-digest", []piece{{off: 0, n: 200, slot: noSlot}}), "an unknown digest")
		m := long.newMidstate(crypto.AlgDigestSHA256, []piece{{off: 0, n: 130, slot: 0}, {off: 130, n: 70, slot: noSlot}})
		require.NotNil(t, m)
		require.Equal(t, 128, m.n, "whole blocks of the literal before the first slot")
	})
}

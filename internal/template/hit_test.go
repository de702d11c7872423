package template

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/wss"
)

// TestHitResultsIndependent: a hit's result lives in its own block and the
// run's scratch (DigestValues, body digest) goes back to the pool, so a
// result the gateway still holds must not change when later hits reuse
// that run (issue 14). Each later message differs in every value a result
// carries: SignatureValue, Timestamp, Covered offsets.
func TestHitResultsIndependent(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	msgs := [][]byte{
		f.sign(t, benchEnvelope(3, "Item"), f.rsa, signer.RefBST, f.now, nil),
		f.sign(t, benchEnvelope(3, "Item"), f.rsa, signer.RefBST, f.now.Add(-time.Second), nil),
		f.sign(t, benchEnvelope(40, "Item"), f.rsa, signer.RefBST, f.now.Add(-2*time.Second), nil),
	}
	_, err := f.engine.Process(msgs[0], f.policy, f.now) // learns
	require.NoError(t, err)
	var held []*wss.Result
	var want []wss.Result
	for round := range 3 {
		for k, m := range msgs {
			res, err := f.engine.Process(m, f.policy, f.now)
			require.NoError(t, err, "round %d message %d", round, k)
			require.Equal(t, metrics.LookupHit, res.Lookup, "round %d message %d", round, k)
			held = append(held, res)
			want = append(want, deepCopy(res))
		}
	}
	for k := range held {
		require.Equal(t, want[k], *held[k], "fail/result %d changed after later hits", k)
	}
	require.NotEqual(t, held[0].Signatures[0].SignatureValue, held[1].Signatures[0].SignatureValue, "the messages must differ")
	require.NotEqual(t, held[0].Timestamp.Created, held[1].Timestamp.Created, "the messages must differ")
}

// deepCopy copies what a result refers to that a hit fills.
func deepCopy(r *wss.Result) wss.Result {
	c := *r
	c.Headers = append([]wss.Part(nil), r.Headers...)
	c.Signatures = append([]wss.Signature(nil), r.Signatures...)
	for i := range c.Signatures {
		c.Signatures[i].Covered = append([]int(nil), r.Signatures[i].Covered...)
		c.Signatures[i].SignatureValue = append([]byte(nil), r.Signatures[i].SignatureValue...)
	}
	if r.Timestamp != nil {
		ts := *r.Timestamp
		c.Timestamp = &ts
	}
	c.Algorithms = append([]wss.AlgorithmUse(nil), r.Algorithms...)
	return c
}

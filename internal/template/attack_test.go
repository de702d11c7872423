package template

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/test/attack"
)

// TestAttackSuiteWithLearnedTemplate runs every mutant of the attack suite
// through both engines with a template already learned for the original
// message's shape: the same verdict everywhere (replay is off here, so a
// few harmless mutants pass both; test/e2e shows all rejected with it on), and the
// mutants that still match are rejected by the template path itself.
func TestAttackSuiteWithLearnedTemplate(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	cases := []struct {
		name, ref string
		enc       func(*signer.Options)
	}{
		{signer.RefBST, signer.RefBST, nil}, {signer.RefIssuerSerial, signer.RefIssuerSerial, nil}, {signer.RefSKI, signer.RefSKI, nil},
		{"bst-encrypted", signer.RefBST, f.encrypt(signer.RefIssuerSerial)},
	}
	for _, c := range cases {
		ref := c.ref
		t.Run("fail/"+c.name, func(t *testing.T) {
			first := f.sign(t, envelope(false, 2, "learn"), f.rsa, ref, f.now, c.enc)
			_, err := f.engine.Process(first, f.policy, f.now)
			require.NoError(t, err)
			base := f.sign(t, envelope(false, 2, "attack"), f.rsa, ref, f.now, c.enc)
			res, err := f.engine.Process(base, f.policy, f.now)
			require.NoError(t, err)
			require.Equal(t, metrics.LookupHit, res.Lookup, "the original shape is on the template path")

			mutants, err := attack.Mutate(base)
			require.NoError(t, err)
			hits := 0
			for _, m := range mutants {
				got, _, gerr := f.policy.Verify(context.Background(), f.engine, m.Data, f.now)
				want, _, werr := f.policy.Verify(context.Background(), f.dom, m.Data, f.now)
				if !assert.Empty(t, Compare(got, gerr, want, werr, f.policy), m.Name) {
					continue
				}
				if gerr != nil && got != nil && got.Lookup == metrics.LookupHit {
					hits++
				}
			}
			t.Logf("%s: %d mutants, %d rejected on the template path itself", c.name, len(mutants), hits)
			assert.Positive(t, hits, "some mutants match the template and must be rejected by it")
		})
	}
}

package template

import (
	"testing"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
)

// TestHitOneAllocation holds the hit to its one allocation (hitBlock) with
// an RSA-2048 SignatureValue: AppendBase64 asks for DecodedLen of the text
// (258 bytes), so a value buffer sized to the key alone (256) would
// allocate the value on its own (issue 14).
func TestHitOneAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool entries at random")
	}
	f := newFixture(t, nil, testOptions())
	if _, err := f.engine.Process(f.sign(t, benchEnvelope(20, "Item"), f.rsa, signer.RefBST, f.now, nil), f.policy, f.now); err != nil {
		t.Fatal(err)
	}
	msg := f.sign(t, benchEnvelope(20, "Item"), f.rsa, signer.RefBST, f.now, nil)
	for range genericShadowHits + 1 {
		res, err := f.engine.Process(msg, f.policy, f.now)
		if err != nil || res.Lookup != metrics.LookupHit {
			t.Fatalf("not a hit: %v", err)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := f.engine.Process(msg, f.policy, f.now); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("a hit allocates %.2f objects, want 1 (hitBlock)", allocs)
	}
}

package template

import (
	"testing"

	"github.com/wssgw/wssgw/internal/wss"
)

// TestCompareEmptyLists: an empty list in one engine's result and none in
// the other's are the same fact (the DOM engine's algorithm uses are sized
// up front, and a UsernameToken message on the template path records none:
// its shadow check disagreed in CI); a list that differs is a difference.
func TestCompareEmptyLists(t *testing.T) {
	p := &wss.Policy{}
	base := func() *wss.Result {
		return &wss.Result{Security: [2]int{-1, -1}, Token: -1, Document: []byte("<e/>")}
	}
	empty := base()
	empty.Algorithms = make([]wss.AlgorithmUse, 0, 16)
	empty.Headers, empty.Attributes, empty.Comments = []wss.Part{}, []wss.Attribute{}, [][2]int{}
	empty.Decrypted, empty.Consumed = []wss.Decryption{}, []string{}
	empty.Confirmations, empty.ConfirmationStarts = []string{}, []int{}
	other := base()
	other.Algorithms = []wss.AlgorithmUse{{}}
	for _, tc := range []struct {
		name string
		a, b *wss.Result
		same bool
	}{
		{"ok/empty-vs-nil", base(), empty, true},
		{"ok/nil-vs-empty", empty, base(), true},
		{"fail/algorithm-use-vs-none", other, base(), false},
		{"fail/algorithm-use-vs-empty", empty, other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diff := Compare(tc.a, nil, tc.b, nil, p)
			if (diff == "") != tc.same {
				t.Fatalf("Compare = %q, want same %v", diff, tc.same)
			}
		})
	}
}

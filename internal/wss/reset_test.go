package wss

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
)

// resetStore is a fakeStore that lost its keys at a given time
// (replay.Reset).
type resetStore struct {
	fakeStore
	at   time.Time
	live bool
}

func (s *resetStore) LastReset() (time.Time, bool) { return s.at, s.live }

// TestCheckReset: within the window after the replay store lost its keys,
// a message that could have been accepted before the loss is refused with
// its own reason, whatever the store says about its key (issue 16).
func TestCheckReset(t *testing.T) {
	cp := config.DefaultPolicy() // maxAge 5m, futureSkew 1m
	cp.UsernameToken.MaxAge = 7 * time.Minute
	maxAge, skew := cp.Timestamp.MaxAge, cp.Timestamp.FutureSkew
	// A loss at 12:00:00.5, on a second boundary's inside.
	at := time.Date(2026, 11, 27, 12, 0, 0, 500_000_000, time.UTC)
	window := 7*time.Minute + 2*skew
	require.Equal(t, window, ResetWindow(cp), "the UsernameToken's longer maxAge sets the window")
	require.Greater(t, window, maxAge)

	withTS := func(created time.Time) *Result {
		r := signed()
		r.Timestamp.Created = created
		return r
	}
	withUT := func(created time.Time) *Result {
		return &Result{Body: 100, Token: -1, Timestamp: &Timestamp{Start: 50, Created: at.Add(time.Hour)},
			Username: &UsernameToken{Username: "alice", Nonce: []byte("n"), Created: created}}
	}
	tests := []struct {
		name string
		at   time.Time
		live bool
		now  time.Time
		msg  *Result
		want Reason // 0: accepted
	}{
		{"ok/no-reset", time.Time{}, false, at, withTS(at.Add(-time.Minute)), 0},
		{"ok/after-window", at, true, at.Add(window), withTS(at.Add(-time.Minute)), 0},
		{"ok/startup-created-after", at, false, at.Add(time.Second), withTS(at.Add(time.Millisecond)), 0},
		{"ok/startup-created-in-the-same-second", at, false, at.Add(time.Second), withTS(at.Truncate(time.Second)), 0},
		{"ok/live-created-after-skew", at, true, at.Add(2 * skew), withTS(at.Add(skew + time.Millisecond)), 0},
		{"ok/no-signature-no-nonce", at, true, at.Add(time.Second), &Result{Body: 100, Token: -1}, 0},
		{"ok/nonce-created-after", at, false, at.Add(time.Second), withUT(at.Add(time.Millisecond)), 0},
		{"fail/startup-created-before", at, false, at.Add(time.Second), withTS(at.Add(-time.Second)), ReasonStoreReset},
		{"fail/live-created-before", at, true, at.Add(time.Second), withTS(at.Add(-time.Millisecond)), ReasonStoreReset},
		{"fail/live-created-within-skew-after", at, true, at.Add(2 * skew), withTS(at.Add(skew)), ReasonStoreReset},
		{"fail/last-instant-of-window", at, true, at.Add(window - time.Nanosecond), withTS(at.Add(-time.Millisecond)), ReasonStoreReset},
		{"fail/signed-without-timestamp", at, false, at.Add(time.Second), func() *Result { r := signed(); r.Timestamp = nil; return r }(), ReasonStoreReset},
		{"fail/nonce-created-before", at, false, at.Add(time.Second), withUT(at.Add(-time.Second)), ReasonStoreReset},
		{"fail/nonce-without-created", at, false, at.Add(time.Second), withUT(time.Time{}), ReasonStoreReset},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &resetStore{fakeStore: fakeStore{seen: map[string]bool{}}, at: tt.at, live: tt.live}
			p, err := Compile("p", cp, store, reload.Options{})
			require.NoError(t, err)
			err = p.checkReplay(context.Background(), tt.msg, tt.now)
			if tt.want == 0 {
				require.NoError(t, err)
				return
			}
			assert.Equal(t, tt.want, reasonOf(err), "%v", err)
			assert.Equal(t, "MessageExpired", tt.want.FaultCode())
		})
	}

	t.Run("ok/replay-off-ignores-resets", func(t *testing.T) {
		off := cp
		off.Replay = "off"
		p, err := Compile("p", off, &resetStore{at: at, live: true}, reload.Options{})
		require.NoError(t, err)
		require.NoError(t, p.checkReplay(context.Background(), withTS(at.Add(-time.Second)), at.Add(time.Second)))
	})
}

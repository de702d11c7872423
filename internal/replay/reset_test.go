package replay

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/replay/replaytest"
)

// resetLog records the Resets a store reports.
type resetLog struct {
	mu sync.Mutex
	rs []Reset
}

func (l *resetLog) add(r Reset) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rs = append(l.rs, r)
}

// causes returns the causes reported so far, in order.
func (l *resetLog) causes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []string{}
	for _, r := range l.rs {
		out = append(out, r.Cause)
	}
	return out
}

func (l *resetLog) last() Reset {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rs[len(l.rs)-1]
}

func TestMemoryStartupReset(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return start }
	tests := []struct {
		name      string
		opts      MemoryOptions
		wantAt    time.Time
		wantCause []string
	}{
		{"ok/library-store-lost-nothing", MemoryOptions{Clock: clock}, time.Time{}, []string{}},
		{"ok/gateway-store-starts-empty", MemoryOptions{Clock: clock, StartupReset: true}, start, []string{CauseStartup}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log resetLog
			tt.opts.OnReset = log.add
			m := NewMemory(tt.opts)
			at, live := m.LastReset()
			assert.True(t, tt.wantAt.Equal(at), "LastReset %v, want %v", at, tt.wantAt)
			assert.False(t, live, "a start-up is not a live loss")
			assert.Equal(t, tt.wantCause, log.causes())
		})
	}
}

// redisWithResets is a store on addr whose Resets go to the returned log.
// Its own periodic check runs once at start only, so that the steps of a
// test decide when the canary is read.
func redisWithResets(t *testing.T, addr string) (*Redis, *resetLog) {
	var log resetLog
	r := newRedis(t, RedisOptions{Addr: addr, OnReset: log.add, CheckInterval: time.Hour, OpTimeout: 2 * time.Second})
	return r, &log
}

func seen(t *testing.T, r *Redis, k string) bool {
	t.Helper()
	replayed, err := r.Seen(t.Context(), key(k), time.Now().Add(time.Minute))
	require.NoError(t, err)
	return replayed
}

// TestRedisDetectsLoss: a canary key tells a Redis store that the server
// lost what it was told (flushed, restarted empty), in the very round trip
// of the SET NX that would otherwise accept a replay; each replica reports
// each loss once, and a replica that starts later adopts the epoch.
func TestRedisDetectsLoss(t *testing.T) {
	srv := replaytest.StartServer(t)
	raw := rawClient(t, srv.Addr())
	ctx := context.Background()

	a, aLog := redisWithResets(t, srv.Addr())
	// The canary is written at start-up, without traffic, and never
	// expires.
	require.Eventually(t, func() bool { return raw.Exists(ctx, DefaultKeyPrefix+canaryName).Val() == 1 }, 5*time.Second, 10*time.Millisecond)
	ttl, err := raw.PTTL(ctx, DefaultKeyPrefix+canaryName).Result()
	require.NoError(t, err)
	assert.Equal(t, time.Duration(-1), ttl, "the canary must not expire")
	assert.Equal(t, []string{CauseStartup}, aLog.causes(), "an empty Redis at start-up")
	startAt, live := a.LastReset()
	assert.False(t, live)
	assert.WithinDuration(t, time.Now(), startAt, 5*time.Second)

	// A second replica finds the canary: no reset of its own, but it
	// adopts the epoch's.
	b, bLog := redisWithResets(t, srv.Addr())
	require.False(t, seen(t, b, "m1"))
	assert.Equal(t, []string{}, bLog.causes())
	bAt, _ := b.LastReset()
	assert.True(t, startAt.Equal(bAt), "B adopted %v, want A's %v", bAt, startAt)
	require.True(t, seen(t, a, "m1"), "shared store")

	t.Run("fail/flushall", func(t *testing.T) {
		before := time.Now()
		require.NoError(t, raw.FlushAll(ctx).Err())
		// The replay passes the SET NX, since its key is gone; the store
		// says so in the same call.
		assert.False(t, seen(t, a, "m1"))
		at, live := a.LastReset()
		assert.True(t, live)
		assert.True(t, at.After(before))
		assert.Equal(t, []string{CauseStartup, CauseLost}, aLog.causes())
		// B sees the loss too, once: whichever store looked first found
		// the canary missing, the other found it replaced, unless both
		// looked before either rewrote it (B's start-up check, late on a
		// loaded host, can run alongside A's request): then both found it
		// missing. Never both replaced: someone saw the loss first.
		seen(t, b, "m2")
		seen(t, b, "m3")
		assert.Equal(t, []string{CauseLost}, bLog.causes())
		const missing, replaced = "canary key missing", "canary key replaced"
		aDetail, bDetail := aLog.last().Detail, bLog.last().Detail
		for _, d := range []string{aDetail, bDetail} {
			assert.True(t, strings.HasPrefix(d, missing) || strings.HasPrefix(d, replaced), "detail %q", d)
		}
		assert.True(t, strings.HasPrefix(aDetail, missing) || strings.HasPrefix(bDetail, missing),
			"one replica must have found the canary missing: A %q, B %q", aDetail, bDetail)
		// Nothing more without a new loss.
		seen(t, a, "m4")
		assert.Equal(t, []string{CauseStartup, CauseLost}, aLog.causes())
	})

	t.Run("fail/restart-empty", func(t *testing.T) {
		before := time.Now()
		srv.Restart()
		// A new connection sees a new run_id, and then no canary: one
		// loss, not two.
		var replayed bool
		require.Eventually(t, func() bool {
			var err error
			replayed, err = a.Seen(ctx, key("m1"), time.Now().Add(time.Minute))
			return err == nil
		}, 5*time.Second, 10*time.Millisecond, "the store recovers once Redis is back")
		assert.False(t, replayed, "the restarted Redis forgot m1")
		at, live := a.LastReset()
		assert.True(t, live)
		assert.True(t, at.After(before))
		assert.Equal(t, []string{CauseStartup, CauseLost, CauseLost}, aLog.causes())
		assert.Equal(t, int64(1), raw.Exists(ctx, DefaultKeyPrefix+canaryName).Val(), "the canary is written again")
	})

	t.Run("fail/concurrent-requests-report-once", func(t *testing.T) {
		require.NoError(t, raw.FlushAll(ctx).Err())
		n := len(aLog.causes())
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				_, err := a.Seen(ctx, key(string(rune('a'+i))), time.Now().Add(time.Minute))
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		assert.Len(t, aLog.causes(), n+1, "one flush, one reset")
	})
}

// TestRedisDetectsIdleLoss: without traffic, the periodic check reports a
// loss, so that the alert fires while the gateway is idle.
func TestRedisDetectsIdleLoss(t *testing.T) {
	srv := replaytest.StartServer(t)
	var log resetLog
	newRedis(t, RedisOptions{Addr: srv.Addr(), OnReset: log.add, CheckInterval: 20 * time.Millisecond})
	require.Eventually(t, func() bool { return len(log.causes()) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, rawClient(t, srv.Addr()).FlushAll(context.Background()).Err())
	require.Eventually(t, func() bool { return len(log.causes()) == 2 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{CauseStartup, CauseLost}, log.causes())
}

// TestRedisRestartWithPersistence: a Redis that reloads its data keeps the
// canary, but a restart may still have lost the last writes (appendfsync
// everysec, RDB snapshots): the changed run_id is a loss.
func TestRedisRestartWithPersistence(t *testing.T) {
	srv := replaytest.StartServer(t, "--appendonly", "yes", "--appendfsync", "always")
	a, log := redisWithResets(t, srv.Addr())
	require.False(t, seen(t, a, "m1"))
	require.Equal(t, []string{CauseStartup}, log.causes())
	// The same server, declared durable by the operator.
	var dLog resetLog
	d := newRedis(t, RedisOptions{Addr: srv.Addr(), OnReset: dLog.add, CheckInterval: time.Hour, OpTimeout: 2 * time.Second, Durable: true})
	require.True(t, seen(t, d, "m1"))

	before := time.Now()
	srv.Restart()
	var replayed bool
	require.Eventually(t, func() bool {
		var err error
		replayed, err = a.Seen(context.Background(), key("m1"), time.Now().Add(time.Minute))
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	assert.True(t, replayed, "appendfsync always kept m1")
	assert.Equal(t, []string{CauseStartup, CauseLost}, log.causes())
	assert.Contains(t, log.last().Detail, "run_id")
	at, live := a.LastReset()
	assert.True(t, live)
	assert.True(t, at.After(before))

	t.Run("ok/durable-restart-is-no-loss", func(t *testing.T) {
		require.Eventually(t, func() bool {
			_, err := d.Seen(context.Background(), key("m2"), time.Now().Add(time.Minute))
			return err == nil
		}, 5*time.Second, 10*time.Millisecond)
		assert.Equal(t, []string{}, dLog.causes())
	})
	t.Run("fail/durable-flush-is-a-loss", func(t *testing.T) {
		require.NoError(t, rawClient(t, srv.Addr()).FlushAll(context.Background()).Err())
		assert.False(t, seen(t, d, "m1"))
		assert.Equal(t, []string{CauseLost}, dLog.causes())
	})
}

func TestCanaryValue(t *testing.T) {
	at := time.Unix(0, 1_780_000_000_123_456_789)
	for _, tt := range []struct {
		name string
		r    Reset
	}{
		{"ok/startup", Reset{At: at}},
		{"ok/live", Reset{At: at, Live: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := formatCanary(tt.r)
			got, ok := parseCanary(v)
			require.True(t, ok, v)
			assert.True(t, at.Equal(got.At))
			assert.Equal(t, tt.r.Live, got.Live)
			assert.NotEqual(t, v, formatCanary(tt.r), "every epoch's value is unique")
		})
	}
	for _, v := range []string{"", "1", "v1 x 0 ab", "v1 1 2 ab", "v2 1 0 ab", "v1 1 0"} {
		t.Run("fail/"+v, func(t *testing.T) {
			_, ok := parseCanary(v)
			assert.False(t, ok)
		})
	}
}

// TestRedisInfoRefused: a Redis user without INFO (an ACL, a managed
// service) still gets a working store, on the canary alone, and the
// missing check is logged once.
func TestRedisInfoRefused(t *testing.T) {
	srv := replaytest.StartServer(t)
	raw := rawClient(t, srv.Addr())
	require.NoError(t, raw.Do(context.Background(), "ACL", "SETUSER", "gw", "on", ">pw", "~*", "+@all", "-info").Err())
	var buf syncBuffer
	var log resetLog
	r := newRedis(t, RedisOptions{Addr: srv.Addr(), Username: "gw", Password: "pw", OnReset: log.add, CheckInterval: time.Hour,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	require.False(t, seen(t, r, "m1"))
	require.True(t, seen(t, r, "m1"))
	require.NoError(t, raw.FlushAll(context.Background()).Err())
	require.False(t, seen(t, r, "m1"))
	assert.Equal(t, []string{CauseStartup, CauseLost}, log.causes(), "the canary still works")
	assert.Equal(t, 1, strings.Count(buf.String(), "Redis refused INFO"), "logged once:\n%s", buf.String())
}

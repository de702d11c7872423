package replay

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/replay/replaytest"
)

func newRedis(t testing.TB, o RedisOptions) *Redis {
	t.Helper()
	r, err := NewRedis(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// rawClient talks to the server directly, to look at what the store wrote.
func rawClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	// No retries: SHUTDOWN closes the connection, which must not make the
	// client redial a stopped server for a second.
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRedisReplicas(t *testing.T) {
	addr := replaytest.StartRedis(t)
	replicas := map[string]*Redis{
		"a": newRedis(t, RedisOptions{Addr: addr}),
		"b": newRedis(t, RedisOptions{Addr: addr}),
	}
	for _, r := range replicas {
		require.NoError(t, r.Ping(t.Context()))
	}
	other := newRedis(t, RedisOptions{Addr: addr, KeyPrefix: "other:"})

	// The steps run in order against the same server.
	steps := []struct {
		name         string
		store        Store
		key          string
		wantReplayed bool
	}{
		{"ok/first-seen-on-a", replicas["a"], "m1", false},
		{"fail/replayed-on-b", replicas["b"], "m1", true},
		{"fail/replayed-on-a", replicas["a"], "m1", true},
		{"ok/first-seen-on-b", replicas["b"], "m2", false},
		{"fail/replayed-on-a-from-b", replicas["a"], "m2", true},
		{"ok/other-prefix-is-separate", other, "m1", false},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			replayed, err := s.store.Seen(t.Context(), key(s.key), time.Now().Add(time.Minute))
			require.NoError(t, err)
			assert.Equal(t, s.wantReplayed, replayed)
		})
	}
}

func TestRedisKeyAndTTL(t *testing.T) {
	addr := replaytest.StartRedis(t)
	r := newRedis(t, RedisOptions{Addr: addr})
	raw := rawClient(t, addr)

	k := key("m1")
	_, err := r.Seen(t.Context(), k, time.Now().Add(30*time.Second))
	require.NoError(t, err)

	// A key without a TTL would never be freed: Redis would fill up.
	ttl, err := raw.PTTL(t.Context(), DefaultKeyPrefix+hex.EncodeToString(k)).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 29*time.Second)
	assert.LessOrEqual(t, ttl, 30*time.Second)
}

func TestRedisExpiry(t *testing.T) {
	addr := replaytest.StartRedis(t)
	r := newRedis(t, RedisOptions{Addr: addr})
	k := key("m1")

	replayed, err := r.Seen(t.Context(), k, time.Now().Add(150*time.Millisecond))
	require.NoError(t, err)
	require.False(t, replayed)
	replayed, err = r.Seen(t.Context(), k, time.Now().Add(150*time.Millisecond))
	require.NoError(t, err)
	require.True(t, replayed)

	time.Sleep(300 * time.Millisecond)
	replayed, err = r.Seen(t.Context(), k, time.Now().Add(time.Minute))
	require.NoError(t, err)
	assert.False(t, replayed, "the key should have expired")
}

func TestRedisExpiredExpiry(t *testing.T) {
	addr := replaytest.StartRedis(t)
	r := newRedis(t, RedisOptions{Addr: addr})
	for _, tt := range []struct {
		name    string
		expires time.Time
	}{
		{"fail/past", time.Now().Add(-time.Second)},
		{"fail/zero", time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			replayed, err := r.Seen(t.Context(), key("m1"), tt.expires)
			require.ErrorIs(t, err, ErrExpired)
			assert.True(t, replayed)
		})
	}
	keys, err := rawClient(t, addr).Keys(t.Context(), "*").Result()
	require.NoError(t, err)
	for _, k := range keys {
		// The store's own canary key (canary.go) is no message's.
		assert.Equal(t, DefaultKeyPrefix+canaryName, k, "nothing may be written for an expired message")
	}
}

func TestRedisConcurrentReplicas(t *testing.T) {
	addr := replaytest.StartRedis(t)
	replicas := []*Redis{
		newRedis(t, RedisOptions{Addr: addr, OpTimeout: 5 * time.Second}),
		newRedis(t, RedisOptions{Addr: addr, OpTimeout: 5 * time.Second}),
	}
	const perReplica, keys = 8, 50
	expires := time.Now().Add(time.Minute)
	onceFresh(t, []Store{replicas[0], replicas[1]}, perReplica, keys, expires)
}

// blackhole accepts connections and never answers, like a hung server.
func blackhole(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func TestRedisFailsClosed(t *testing.T) {
	tests := []struct {
		name string
		// store returns a store whose next Seen must fail.
		store func(t *testing.T) *Redis
		// wantCause is also wrapped, when set.
		wantCause error
	}{
		{"fail/connection-refused", func(t *testing.T) *Redis {
			// A long OpTimeout: a refused dial must fail at once, not be
			// retried until the timeout (checked below).
			return newRedis(t, RedisOptions{Addr: closedPort(t), OpTimeout: 5 * time.Second})
		}, nil},
		{"fail/server-stopped", func(t *testing.T) *Redis {
			addr := replaytest.StartRedis(t)
			r := newRedis(t, RedisOptions{Addr: addr})
			// Use the store first, so that it holds a pooled connection the
			// shutdown breaks.
			_, err := r.Seen(t.Context(), key("warm"), time.Now().Add(time.Minute))
			require.NoError(t, err)
			// SHUTDOWN closes the connection instead of replying.
			_ = rawClient(t, addr).Shutdown(t.Context()).Err()
			require.Eventually(t, func() bool {
				c, err := net.Dial("tcp", addr)
				if err == nil {
					_ = c.Close()
				}
				return err != nil
			}, 5*time.Second, 10*time.Millisecond)
			return r
		}, nil},
		{"fail/timeout", func(t *testing.T) *Redis {
			return newRedis(t, RedisOptions{Addr: blackhole(t), OpTimeout: 100 * time.Millisecond})
		}, os.ErrDeadlineExceeded},
		{"fail/store-closed", func(t *testing.T) *Redis {
			r := newRedis(t, RedisOptions{Addr: replaytest.StartRedis(t)})
			require.NoError(t, r.Close())
			return r
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.store(t)
			start := time.Now()
			replayed, err := r.Seen(t.Context(), key("m1"), time.Now().Add(time.Minute))
			require.ErrorIs(t, err, ErrUnavailable)
			if tt.wantCause != nil {
				// A hung server times out in the read (i/o timeout) or,
				// when the connection's set-up (INFO, canary.go) is what
				// hangs, in the context: either is a timeout.
				assert.True(t, errors.Is(err, tt.wantCause) || errors.Is(err, context.DeadlineExceeded), "%v is not a timeout", err)
			}
			assert.True(t, replayed, "an unavailable store must not answer \"not replayed\"")
			// OpTimeout bounds the call, and nothing else makes it wait;
			// leave room for a slow CI machine.
			assert.Less(t, time.Since(start), time.Second)

			require.ErrorIs(t, r.Ping(t.Context()), ErrUnavailable)
		})
	}
}

func TestRedisAuth(t *testing.T) {
	addr := replaytest.StartRedis(t, "--requirepass", "s3cret")
	tests := []struct {
		name     string
		username string
		password string
		wantErr  error
	}{
		{"ok/password", "", "s3cret", nil},
		{"ok/default-user", "default", "s3cret", nil},
		{"fail/wrong-password", "", "wrong", ErrUnavailable},
		{"fail/no-password", "", "", ErrUnavailable},
		{"fail/unknown-user", "nobody", "s3cret", ErrUnavailable},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRedis(t, RedisOptions{Addr: addr, Username: tt.username, Password: tt.password})
			pingErr := r.Ping(t.Context())
			// A distinct key per case: a failing case must not be
			// excused by an earlier case's key.
			replayed, err := r.Seen(t.Context(), key(string(rune(i))), time.Now().Add(time.Minute))
			if tt.wantErr != nil {
				require.ErrorIs(t, pingErr, tt.wantErr)
				require.ErrorIs(t, err, tt.wantErr)
				assert.True(t, replayed)
				return
			}
			require.NoError(t, pingErr)
			require.NoError(t, err)
			assert.False(t, replayed)
		})
	}
}

func TestNewRedisOptions(t *testing.T) {
	_, err := NewRedis(RedisOptions{})
	require.Error(t, err, "an empty address must be refused, not default to localhost")

	r, err := NewRedis(RedisOptions{Addr: "127.0.0.1:1"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	assert.Equal(t, DefaultKeyPrefix, r.prefix)
	assert.Equal(t, DefaultOpTimeout, r.opTimeout)
}

// TestRedisFarExpiry: time.Until saturates at about 292 years, and
// rounding that up to milliseconds wrapped around to a negative TTL: the
// key was written without one (Redis would never free it) or refused.
// Callers clamp (wss.checkReplay); the store must be safe by itself.
func TestRedisFarExpiry(t *testing.T) {
	addr := replaytest.StartRedis(t)
	r := newRedis(t, RedisOptions{Addr: addr})
	raw := rawClient(t, addr)
	for _, tt := range []struct {
		name    string
		expires time.Time
	}{
		{"ok/year-2300", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"ok/year-9999", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := key(tt.name)
			for _, want := range []bool{false, true} {
				replayed, err := r.Seen(t.Context(), k, tt.expires)
				require.NoError(t, err)
				require.Equal(t, want, replayed)
			}
			ttl, err := raw.PTTL(t.Context(), DefaultKeyPrefix+hex.EncodeToString(k)).Result()
			require.NoError(t, err)
			assert.Greater(t, ttl, time.Duration(0), "the key has a TTL")
			assert.LessOrEqual(t, ttl, 100*365*24*time.Hour)
		})
	}
}

// go-redis's own log lines go through the store's slog logger: a JSON log
// stays JSON.
func TestRedisLogsThroughSlog(t *testing.T) {
	addr := replaytest.StartRedis(t)
	var buf syncBuffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	r := newRedis(t, RedisOptions{Addr: addr, Logger: log})
	require.NoError(t, r.Ping(context.Background()))
	// go-redis logs a sub-millisecond expiry it truncates: a line it writes
	// on its own, through the process-wide logger NewRedis set.
	c := rawClient(t, addr)
	require.NoError(t, c.Set(context.Background(), "k", "v", 500*time.Microsecond).Err())
	out := buf.String()
	require.NotEmpty(t, out)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "not JSON: %s", line)
		assert.Equal(t, "WARN", rec["level"])
		assert.Equal(t, "redis", rec["component"])
	}
	assert.Contains(t, out, "truncating to 1ms")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

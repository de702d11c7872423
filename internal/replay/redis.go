package replay

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Redis defaults.
const (
	DefaultKeyPrefix   = "wssgw:replay:"
	DefaultOpTimeout   = 200 * time.Millisecond
	DefaultDialTimeout = time.Second
	// DefaultCheckInterval is how often a Redis store looks at its canary
	// key on its own (RedisOptions.CheckInterval).
	DefaultCheckInterval = 5 * time.Second
)

// maxTTL bounds a key's lifetime: a hundred years is "until the message
// can no longer be accepted" for any expiry, and far inside both
// time.Duration and Redis's millisecond expiry range.
const maxTTL = 100 * 365 * 24 * time.Hour

// RedisOptions configures NewRedis.
type RedisOptions struct {
	// Addr is the server's host:port.
	Addr string
	// Username and Password authenticate with AUTH (Username empty: the
	// default user, as with requirepass).
	Username string
	Password string
	// DB is the logical database number.
	DB int
	// KeyPrefix namespaces the keys; "" means DefaultKeyPrefix. Replicas
	// that must see each other's messages need the same prefix.
	KeyPrefix string
	// TLS, when set, is used to connect; nil means plaintext.
	TLS *tls.Config
	// DialTimeout bounds establishing a connection; 0 means
	// DefaultDialTimeout. A Seen call is bounded by OpTimeout in any case.
	DialTimeout time.Duration
	// OpTimeout bounds each Seen and Ping, a dial it may need included; 0
	// means DefaultOpTimeout. It is the latency a Redis outage adds to each
	// rejected request.
	OpTimeout time.Duration
	// Logger, when set, receives go-redis's own log lines (pool and
	// connection trouble) instead of its plain-text default on stderr, so
	// that a JSON log stays JSON. go-redis has one process-wide logger: the
	// last NewRedis with a Logger sets it.
	Logger *slog.Logger
	// OnReset, when set, is called once for each Reset the store detects
	// (canary.go): the caller logs it and counts it.
	OnReset func(Reset)
	// CheckInterval is how often the store checks its canary key without
	// traffic, so that a loss is reported while the gateway is idle; 0
	// means DefaultCheckInterval. Every Seen checks it too, in the same
	// round trip, so the interval does not bound how long replays could
	// pass.
	CheckInterval time.Duration
	// Durable is the operator's word that the server loses no
	// acknowledged write across a restart or failover: a changed run_id
	// is then no Reset. A missing canary still is.
	Durable bool
}

// Redis is a Store shared by every replica that uses the same server and
// KeyPrefix. Each Seen is one SET key 1 NX PX ttl, which Redis executes
// atomically, so one replica wins and the others see a replay. The same
// round trip reads the canary key that tells whether the server still
// holds what it was told (canary.go).
type Redis struct {
	c         *redis.Client
	prefix    string
	opTimeout time.Duration
	canary    canary
	log       *slog.Logger
	stop      context.CancelFunc
	done      chan struct{}
}

// NewRedis returns a Redis store. It does not connect: call Ping at startup
// to fail fast on a wrong address or credentials.
func NewRedis(o RedisOptions) (*Redis, error) {
	if o.Addr == "" {
		return nil, errors.New("replay: redis address is empty")
	}
	if o.KeyPrefix == "" {
		o.KeyPrefix = DefaultKeyPrefix
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.CheckInterval <= 0 {
		o.CheckInterval = DefaultCheckInterval
	}
	if o.Logger != nil {
		redis.SetLogger(redisLogger{o.Logger})
	}
	r := &Redis{prefix: o.KeyPrefix, opTimeout: o.OpTimeout, log: o.Logger, done: make(chan struct{})}
	r.canary.key = o.KeyPrefix + canaryName
	r.canary.onReset = o.OnReset
	r.canary.durable = o.Durable
	r.c = redis.NewClient(&redis.Options{
		Addr:        o.Addr,
		Username:    o.Username,
		Password:    o.Password,
		DB:          o.DB,
		TLSConfig:   o.TLS,
		DialTimeout: o.DialTimeout,
		// Per-call deadlines come from the context (OpTimeout); these only
		// back them up.
		ReadTimeout:           o.OpTimeout,
		WriteTimeout:          o.OpTimeout,
		ContextTimeoutEnabled: true,
		// No retries: if a SET NX reached Redis but its reply was lost, the
		// retry would find the key and report the fresh message as a replay.
		// One failed request is better than that, and a retry would not fit
		// in OpTimeout anyway.
		MaxRetries: -1,
		// A refused connection fails the call at once, instead of
		// retrying until OpTimeout; the next request dials again.
		DialerRetries: 1,
		// Spare every new connection the CLIENT SETINFO and CLIENT
		// MAINT_NOTIFICATIONS round trips; neither matters for SET NX, and
		// older or managed servers reject them.
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		// A restart or a failover always breaks the connections, so a new
		// one is where a changed server shows (its run_id): a restarted
		// Redis that reloaded its data from disk still has the canary but
		// may have lost its last writes (appendfsync everysec, RDB).
		OnConnect: r.checkServer,
	})
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go r.watch(ctx, o.CheckInterval)
	return r, nil
}

// Seen implements Store.
func (r *Redis) Seen(ctx context.Context, key []byte, expires time.Time) (bool, error) {
	// The TTL is measured on this replica's clock, the same clock its
	// timestamp checks use, so skew with the Redis server's clock does not
	// shorten it (SET PXAT would depend on the server's clock).
	ttl := time.Until(expires)
	if ttl <= 0 {
		return true, errExpired
	}
	// Round up to whole milliseconds, Redis's unit: rounding down could
	// forget the key just before the message stops being acceptable.
	// time.Until saturates at about 292 years, where rounding up would
	// wrap around to a negative TTL (an expiry after 2262 that callers
	// should have clamped, wss.checkReplay): such a TTL is capped first.
	ttl = (min(ttl, maxTTL) + time.Millisecond - 1).Truncate(time.Millisecond)

	// Hex keeps keys printable in redis-cli, MONITOR and slow logs.
	k := make([]byte, len(r.prefix)+hex.EncodedLen(len(key)))
	hex.Encode(k[copy(k, r.prefix):], key)

	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	// SET first, then GET the canary, in one round trip: if the data is
	// lost between the two, the GET sees it and the caller refuses this
	// message as created before the loss; the other order would let a SET
	// land in an emptied store unnoticed.
	pipe := r.c.Pipeline()
	set := pipe.SetNX(ctx, string(k), "1", ttl)
	get := pipe.Get(ctx, r.canary.key)
	// Exec's error is the first command's that failed, or one that failed
	// them all (a connection that could not be set up, which leaves the
	// commands' own errors unset); the canary's redis.Nil is no failure.
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return true, r.unavailable("SET NX", err)
	}
	if err := set.Err(); err != nil {
		return true, r.unavailable("SET NX", err)
	}
	if err := r.observe(ctx, get); err != nil {
		return true, err
	}
	return !set.Val(), nil
}

// Ping checks that the server answers and accepts the credentials.
func (r *Redis) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	if err := r.c.Ping(ctx).Err(); err != nil {
		return r.unavailable("PING", err)
	}
	return nil
}

// Close stops the canary checks and closes the connections. Seen fails
// closed afterwards.
func (r *Redis) Close() error {
	r.stop()
	<-r.done
	if err := r.c.Close(); err != nil {
		return fmt.Errorf("replay: redis close: %w", err)
	}
	return nil
}

// unavailable wraps both ErrUnavailable, for the caller's decision, and the
// cause, for logs and for errors.Is(err, context.DeadlineExceeded).
func (r *Redis) unavailable(op string, err error) error {
	return fmt.Errorf("replay: redis %s %s: %w: %w", op, r.c.Options().Addr, ErrUnavailable, err)
}

// redisLogger is go-redis's Logging on slog. go-redis logs only what went
// wrong or is degraded (failed dials, dropped connections, truncated
// values), so its lines are warnings; the text is go-redis's own, under
// component=redis.
type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	if !r.l.Enabled(ctx, slog.LevelWarn) {
		return
	}
	msg := strings.TrimSpace(strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: "))
	r.l.LogAttrs(ctx, slog.LevelWarn, "redis", slog.String("component", "redis"), slog.String("detail", msg))
}

// LastReset returns when the store last lost what it remembered, and
// whether under running gateways (Reset); a zero time if it never did.
func (r *Redis) LastReset() (at time.Time, live bool) { return r.canary.LastReset() }

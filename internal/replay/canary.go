package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// How a Redis store notices that the server lost what it was told (issue
// 16): a Redis restarted without persistence, flushed, or failed over to a
// replica that missed writes comes back empty, and every replay of a
// message accepted before would be accepted again.
//
//   - A canary key with no expiry (KeyPrefix + "canary") holds an epoch
//     value. Every Seen reads it in the same round trip as its SET NX; the
//     store also reads it every CheckInterval. A missing or changed canary
//     means the keys written before may be gone: the store records a Reset
//     and writes a new canary (SET NX, so concurrent replicas agree on one
//     value, which the others then see as changed and detect too).
//   - A persistent Redis that restarted still has its canary but may have
//     lost its last writes (appendfsync everysec, or the writes since the
//     last RDB snapshot), and a replica promoted by a failover may miss
//     the last writes it was sent. Each new connection reads INFO server:
//     a changed run_id is a restart or another server, and counts as a
//     Reset too, unless the operator declared Redis durable
//     (RedisOptions.Durable): the client cannot see whether the old
//     server had fsynced every write.
//   - The canary value carries its epoch's Reset (time and kind), so a
//     replica that starts during another's post-reset window adopts it.
//
// A replica's first look that finds no canary records a CauseStartup
// Reset: the store holds nothing this deployment is known to have
// written, so what was accepted before is unknown (a first install looks
// the same as a total loss while every gateway was down).

const canaryName = "canary"

// canary is a Redis store's view of its canary key. known is written
// under mu only; mu is held across the canary's own round trips, which
// may dial, so checkServer (run on a dial) uses smu and pending instead.
type canary struct {
	resets
	key string
	mu  sync.Mutex
	// known is the canary value this replica last saw or wrote; nil before
	// its first look.
	known atomic.Pointer[string]
	// pending is set once a Reset was recorded and until a canary value
	// is established again, so that one loss is reported once even when
	// several signs of it (run_id, missing canary) arrive.
	pending atomic.Bool
	// smu guards the fields below.
	smu sync.Mutex
	// runID is the server's INFO run_id at the last connection; "" before
	// the first.
	runID string
	// infoRefused is set when the server refused INFO (an ACL, a renamed
	// command): restarts that keep the canary then go unnoticed, which is
	// logged once.
	infoRefused bool
	// evictionWarned is set once a non-noeviction maxmemory-policy was
	// logged.
	evictionWarned bool
	// durable: a changed run_id is no loss (RedisOptions.Durable).
	durable bool
}

// observe checks the canary value a GET returned against the one this
// replica knows. It is the hot path's only extra work: one string compare
// when nothing changed.
func (r *Redis) observe(ctx context.Context, get *redis.StringCmd) error {
	val, err := get.Result()
	present := err == nil
	if err != nil && !errors.Is(err, redis.Nil) {
		return r.unavailable("GET canary", err)
	}
	c := &r.canary
	if k := c.known.Load(); k != nil && present && *k == val && !c.pending.Load() {
		return nil
	}
	return r.changed(ctx, val, present)
}

// changed handles a canary that differs from the known one, or a pending
// Reset. It returns an error wrapping ErrUnavailable when the canary could
// not be written: the caller then fails closed, and the next call tries
// again.
func (r *Redis) changed(ctx context.Context, val string, present bool) error {
	c := &r.canary
	c.mu.Lock()
	defer c.mu.Unlock()
	known := c.known.Load()
	switch {
	case known != nil && present && *known == val && !c.pending.Load():
		// Another call handled it meanwhile.
		return nil
	case c.pending.Load():
		// A Reset was recorded (a run_id change, or a missing canary
		// whose rewrite failed): establish the canary, report nothing new.
	case known == nil && present:
		// First look: the store has kept this deployment's canary.
	case known == nil:
		if c.pending.CompareAndSwap(false, true) {
			c.record(Reset{At: time.Now(), Cause: CauseStartup,
				Detail: "no canary key at start-up: the Redis store holds nothing this deployment is known to have written"})
		}
	default:
		// This value may have been read before another call of this
		// replica wrote the canary (the first look, or after a loss it
		// already reported): read it again before calling it a loss. One
		// more round trip, on this rare path only.
		cur, err := r.c.Get(ctx, c.key).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return r.unavailable("GET canary", err)
		}
		if err == nil && cur == *known {
			return nil
		}
		val, present = cur, err == nil
		if !c.pending.CompareAndSwap(false, true) {
			// checkServer reported this loss meanwhile.
			break
		}
		detail := "canary key missing: Redis was flushed, restarted without persistence or failed over to a replica that missed writes"
		if present {
			detail = "canary key replaced: another gateway found the Redis store had lost its keys"
		}
		c.record(Reset{At: time.Now(), Live: true, Cause: CauseLost, Detail: detail})
	}
	if present {
		// Adopt the epoch's Reset, in case it is later than what this
		// replica knows (another replica's, when this one just started).
		c.setKnown(val)
		if rs, ok := parseCanary(val); ok {
			c.adopt(rs)
		}
		return nil
	}
	return r.writeCanary(ctx)
}

// setKnown establishes val as the canary. c.mu is held.
func (c *canary) setKnown(val string) {
	c.known.Store(&val)
	c.pending.Store(false)
}

// writeCanary writes a canary carrying the latest Reset, unless another
// replica wrote one first, which it then adopts. c.mu is held.
func (r *Redis) writeCanary(ctx context.Context) error {
	c := &r.canary
	rs := Reset{At: time.Now()}
	if p := c.last.Load(); p != nil {
		rs = *p
	}
	val := formatCanary(rs)
	set, err := r.c.SetNX(ctx, c.key, val, 0).Result()
	if err != nil {
		return r.unavailable("SET canary", err)
	}
	if !set {
		if val, err = r.c.Get(ctx, c.key).Result(); err != nil {
			return r.unavailable("GET canary", err)
		}
	}
	c.setKnown(val)
	return nil
}

// formatCanary encodes a Reset as a canary value; the random part makes
// every epoch's value unique even when two are written in the same
// nanosecond.
func formatCanary(rs Reset) string {
	var id [8]byte
	_, _ = rand.Read(id[:])
	live := 0
	if rs.Live {
		live = 1
	}
	return fmt.Sprintf("v1 %d %d %s", rs.At.UnixNano(), live, hex.EncodeToString(id[:]))
}

// parseCanary decodes a canary value written by formatCanary.
func parseCanary(val string) (Reset, bool) {
	f := strings.Fields(val)
	if len(f) != 4 || f[0] != "v1" || (f[2] != "0" && f[2] != "1") {
		return Reset{}, false
	}
	ns, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return Reset{}, false
	}
	cause := CauseStartup
	if f[2] == "1" {
		cause = CauseLost
	}
	return Reset{At: time.Unix(0, ns), Live: f[2] == "1", Cause: cause, Detail: "adopted from the canary key"}, true
}

// checkServer runs on every new connection, before its first command: a
// changed INFO run_id means the server restarted (or is another server,
// after a failover), and may have lost its latest writes even if it
// reloaded its data. It also warns once about a maxmemory-policy that
// evicts keys, a loss no canary shows.
func (r *Redis) checkServer(ctx context.Context, cn *redis.Conn) error {
	c := &r.canary
	info, err := cn.Info(ctx, "server").Result()
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			// The server answered, refusing INFO: keep working on the
			// canary alone, and say so once.
			c.smu.Lock()
			defer c.smu.Unlock()
			if !c.infoRefused {
				c.infoRefused = true
				r.warn("Redis refused INFO: a restart that keeps the canary key (persistence) cannot be detected", slog.String("error", err.Error()))
			}
			return nil
		}
		return err
	}
	id := infoField(info, "run_id")
	policy := ""
	if mem, err := cn.Info(ctx, "memory").Result(); err == nil {
		policy = infoField(mem, "maxmemory_policy")
	}
	c.smu.Lock()
	defer c.smu.Unlock()
	if policy != "" && policy != "noeviction" && !c.evictionWarned {
		c.evictionWarned = true
		r.warn("Redis maxmemory-policy evicts keys: a full Redis silently forgets replay keys; set maxmemory-policy noeviction so that it fails closed instead",
			slog.String("maxmemory_policy", policy))
	}
	switch {
	case id == "" || id == c.runID:
	case c.runID == "":
		c.runID = id
	case c.durable:
		// Declared durable: the restarted server has every write it
		// acknowledged; an empty one still shows by its canary.
		c.runID = id
	default:
		old := c.runID
		c.runID = id
		if c.pending.CompareAndSwap(false, true) {
			c.record(Reset{At: time.Now(), Live: true, Cause: CauseLost,
				Detail: fmt.Sprintf("Redis restarted or failed over (run_id %s, was %s): writes not yet persisted may be lost", id, old)})
		}
	}
	return nil
}

// infoField returns a field of an INFO reply.
func infoField(info, name string) string {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// watch reads the canary at once and then every interval, so that the
// canary is written at start-up and a loss is seen without traffic. Its
// errors are the requests' errors too, and fail them closed: they are not
// logged here again.
func (r *Redis) watch(ctx context.Context, interval time.Duration) {
	defer close(r.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, r.opTimeout)
		_ = r.observe(cctx, r.c.Get(cctx, r.canary.key))
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *Redis) warn(msg string, attrs ...slog.Attr) {
	if r.log != nil {
		r.log.LogAttrs(context.Background(), slog.LevelWarn, msg, append(attrs, slog.String("component", "replay"))...)
	}
}

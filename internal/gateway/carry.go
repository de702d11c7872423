package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"reflect"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/replay"
	"github.com/wssgw/wssgw/internal/template"
)

// What a configuration reload carries from the running gateway to the
// next one (issue 16). A reload builds a whole new Gateway, so that every
// request runs on one configuration from start to end; state that must
// outlive the swap is built by the first gateway and then borrowed:
//
//   - the replay store, while replay.* (and the files it names) did not
//     change: a memory store keeps its entries, a Redis store its pool;
//   - each compiled policy whose policies.<name> and templates.* did not
//     change, and with it its learned templates and pollers;
//   - each policy's OCSP checker (its cache of responses) while its
//     trust.ocsp section did not change, even if the policy did.
//
// Borrowing is undone if the new gateway fails to build (build errors
// leave the running gateway as it was); commit hands ownership over once
// the new gateway serves, and the old gateway, closed after its last
// request, then closes only what it still owns.
//
// State of other parts that must survive a reload (the in-flight memory
// budget, rate limiter buckets) follows the same pattern, in three places:
//
//   - build: with prev, take prev's object as it is (g.x = prev.x); without,
//     make it (g.x = x.New(cfg.X)). Do not reconfigure it here: build may
//     still fail, and a failed reload must leave the running gateway as it
//     was;
//   - commit (called only once the new gateway is built, before it serves):
//     next.x.Reconfigure(cfg.X), with the configuration passed down to it;
//   - Close: leave such an object alone (it is shared with the successor),
//     or close it only when this gateway still owns it, as policies do.
//
// Requests still running on the old gateway then use the same object as
// the new one's, which is what a process-wide budget or a per-client
// bucket needs.

// commit hands the state next borrowed from prev over to next: prev no
// longer closes it. Called once next serves, under the reload lock.
func commit(prev, next *Gateway) {
	if prev == nil {
		return
	}
	pp, np := prev.policies, next.policies
	if np.store != nil && np.store == pp.store {
		pp.ownsStore, np.ownsStore = false, true
	}
	for name, c := range np.compiled {
		if old, ok := pp.compiled[name]; ok && old.policy == c.policy {
			old.owned, c.owned = false, true
		}
	}
	for name, r := range np.ocsp {
		if old, ok := pp.ocsp[name]; ok && old.checker == r.checker {
			old.owned, r.owned = false, true
		}
	}
}

// openStore borrows prev's replay store when its configuration is the
// same, or opens a new one.
func (ps *policies) openStore(rc config.Replay, m *metrics.Metrics, log *slog.Logger, prev *policies) error {
	key := replayKey(rc)
	if prev != nil && prev.store != nil && prev.storeKey == key {
		ps.store, ps.observed, ps.storeKey = prev.store, prev.observed, key
		return nil
	}
	store, err := newReplayStore(rc, log)
	if err != nil {
		return err
	}
	// The policies use the store through its metrics; ps.store stays the
	// store itself, for Close and anything that needs its type.
	ps.store, ps.storeKey, ps.ownsStore = store, key, true
	ps.observed = observeReplay(store, rc.Store, m)
	return nil
}

// reusable returns prev's compiled policy name when the new configuration
// would compile the same thing: same policy and templates configuration,
// and the same replay store (a policy holds its store).
func (ps *policies) reusable(name string, cfg *config.Config, store replay.Store) *compiled {
	if ps == nil || ps.store != store {
		return nil
	}
	c, ok := ps.compiled[name]
	if !ok || !reflect.DeepEqual(c.cfg, cfg.Policies[name]) || !reflect.DeepEqual(c.tcfg, cfg.Templates) {
		return nil
	}
	return c
}

// replayKey identifies a replay store configuration, the content of the
// files it names included: a rotated Redis password opens a new client.
func replayKey(rc config.Replay) string {
	h := sha256.New()
	fmt.Fprintf(h, "%#v", rc)
	for _, f := range []string{rc.Redis.PasswordFile, rc.Redis.CAFile} {
		if f == "" {
			continue
		}
		data, err := os.ReadFile(f)
		fmt.Fprintf(h, "\x00%s\x00%v\x00", f, err)
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fresh lists the template stores built for this gateway, not borrowed.
func (ps *policies) fresh() map[*template.Store]bool {
	out := map[*template.Store]bool{}
	for _, c := range ps.compiled {
		if c.owned && c.templates != nil {
			out[c.templates] = true
		}
	}
	return out
}

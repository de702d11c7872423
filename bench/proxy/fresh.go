package main

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/testtraffic"
)

// freshEvery paces the fresh-shape pool: one fresh message per this many
// legitimate completions, so fresh traffic is 10 % of all requests.
const freshEvery = 9

// nextFresh alternates the two fresh-shape variants: validly signed with
// a trusted key (an attacker with a key; accepted) and signed-looking
// garbage (refused after the digests).
func nextFresh(g *testtraffic.Generator, i int) (testtraffic.Message, error) {
	if i%2 == 0 {
		return g.Fresh()
	}
	return g.FreshGarbage()
}

// freshResult is what the fresh-shape pool, or the new partners, did in
// one phase: refused is a fault (a verdict on the message), shed a 503
// (the DOM engine's share or queue was full: no verdict).
type freshResult struct {
	sent, accepted, refused, shed, errors int
	dry                                   bool
}

func (f *freshResult) add(o freshResult) {
	f.sent += o.sent
	f.accepted += o.accepted
	f.refused += o.refused
	f.shed += o.shed
	f.errors += o.errors
	f.dry = f.dry || o.dry
}

// count records one answer.
func (f *freshResult) count(status int, err error) {
	f.sent++
	switch {
	case err != nil:
		f.errors++
	case status == http.StatusOK:
		f.accepted++
	case status == http.StatusServiceUnavailable:
		f.shed++
	default:
		f.refused++
	}
}

func (f freshResult) String() string {
	return fmt.Sprintf("%d/%d/%d/%d", f.accepted, f.refused, f.shed, f.errors)
}

// phase is one measured phase of the fresh-shape scenario; cpu is
// wssgw's CPU time during it.
type phase struct {
	legit          result
	fresh, partner freshResult
	cpu            time.Duration
}

// shedRoutes are the routes whose overload rejections the fresh-shape
// scenario reads: the mix (legitimate and fresh-shape traffic) and the
// new partners'.
var shedRoutes = []string{"mix", "partner"}

// runFresh measures how much legitimate throughput fresh-shape traffic
// removes (issue 14, goal <= 10 %). Two phases alternate on the mix route:
// "alone", the legitimate mix from -conns connections; and "with fresh",
// the same legitimate load plus a separate pool of -fresh-conns
// connections sending fresh-shape messages, paced to one per freshEvery
// legitimate completions (10 % of the requests). The fresh pool has its
// own connections, so it competes for wssgw's CPU, not for the legitimate
// clients' slots. Each round gives each phase -duration, cut into
// -fresh-slices slices run in A W W A W ... order, so that load from
// outside the benchmark and the store's learning over the run fall on
// both phases alike; the loss is 1 - with/alone of the legitimate
// requests/s over all slices of all rounds, and per round for the spread.
func runFresh(o options, env *environment) error {
	fmt.Println()
	fmt.Printf("== fresh-shape: legitimate mix alone vs with 1 fresh-shape message per %d legitimate (10 %%)\n", freshEvery)
	url := "http://" + env.gw + mixPath
	rate, left := env.mixRate, env.mixLeft
	if rate == 0 { // signed-mix did not run: warm wssgw up on the mix
		warm, err := env.pools.make("warm-up", warmupPool(o), nextMix)
		if err != nil {
			return err
		}
		wr, err := load(url, &once{reqs: warm}, o.conns, o.warmup, loadOptions{})
		if err != nil {
			return fmt.Errorf("fresh-shape warm-up: %w", err)
		}
		rate = wr.rps
	}
	partners, err := env.pools.partners(o.rounds * (int(o.duration/partnerEvery) + max(1, o.freshSlices)))
	if err != nil {
		return err
	}
	partnersBefore, _, err := scrape(env.admin, "partner", "mix")
	if err != nil {
		return err
	}
	legit := &refill{o: o, p: env.pools, what: "legitimate", draw: nextMix, src: &once{reqs: left}, rate: rate}
	fresh := &refill{o: o, p: env.pools, what: "fresh-shape", draw: nextFresh, src: &once{}, rate: rate / freshEvery}
	// Top up for a whole round of both phases, so that signing, which
	// is slow, runs between rounds rather than between slices.
	legit.need, fresh.need = 2, 1
	slices := max(1, o.freshSlices)
	slice := o.duration / time.Duration(slices)
	rounds := make([]map[bool]phase, o.rounds)
	looks := map[bool]lookups{false: {}, true: {}}
	shed := map[bool]map[string]sheds{false: {}, true: {}}
	for _, ph := range shed {
		for _, r := range shedRoutes {
			ph[r] = sheds{}
		}
	}
	prof := &freshProfiles{o: o, admin: env.admin}
	for r := range o.rounds {
		if err := legit.ensure(); err != nil {
			return err
		}
		if err := fresh.ensure(); err != nil {
			return err
		}
		parts := map[bool][]phase{}
		for k := range slices {
			for i := range 2 {
				withFresh := (i+k+r)%2 == 1
				// A slice faster than the round's estimate may have
				// used up the stock: top up, outside the measured time.
				if err := legit.ensureAtLeast(legit.forRun(slice)); err != nil {
					return err
				}
				if err := fresh.ensureAtLeast(fresh.forRun(slice)); err != nil {
					return err
				}
				before, _, err := scrape(env.admin, "mix", "mix")
				if err != nil {
					return err
				}
				shedBefore, err := scrapeSheds(env.admin, shedRoutes...)
				if err != nil {
					return err
				}
				wait := prof.start(withFresh, slice)
				cpu0, measured := proc.CPU(env.gwPID)
				ph, err := runPhase(o, url, slice, legit.src, fresh.src, partners, withFresh)
				wait()
				if err != nil {
					return fmt.Errorf("fresh-shape: %w", err)
				}
				if cpu1, ok := proc.CPU(env.gwPID); measured && ok {
					ph.cpu = cpu1 - cpu0
				}
				after, _, err := scrape(env.admin, "mix", "mix")
				if err != nil {
					return err
				}
				shedAfter, err := scrapeSheds(env.admin, shedRoutes...)
				if err != nil {
					return err
				}
				looks[withFresh].add(before, after)
				for _, r := range shedRoutes {
					shed[withFresh][r].add(shedBefore[r], shedAfter[r])
				}
				parts[withFresh] = append(parts[withFresh], ph)
				legit.saw(ph.legit)
				fresh.rate = legit.rate / freshEvery
			}
		}
		rounds[r] = map[bool]phase{false: mergePhases(parts[false]), true: mergePhases(parts[true])}
	}
	_, held, err := scrape(env.admin, "mix", "mix")
	if err != nil {
		return err
	}
	partnersAfter, _, err := scrape(env.admin, "partner", "mix")
	if err != nil {
		return err
	}
	partnerLooks := lookups{}
	partnerLooks.add(partnersBefore, partnersAfter)
	env.summary = append(env.summary, reportFresh(o, freshReport{rounds: rounds, looks: looks, partnerLooks: partnerLooks,
		shed: shed, held: held, partnerKeys: len(env.pools.partnerKeys)}))
	return nil
}

// mergePhases is one phase over several slices.
func mergePhases(ps []phase) phase {
	var m phase
	rs := make([]result, len(ps))
	for i, p := range ps {
		rs[i] = p.legit
		m.fresh.add(p.fresh)
		m.partner.add(p.partner)
		m.cpu += p.cpu
	}
	m.legit = merge(rs)
	return m
}

// runPhase is one measured phase: the legitimate load, and with withFresh
// the paced fresh-shape pool and the new partners beside it until the same
// deadline.
func runPhase(o options, url string, d time.Duration, legit, fresh *once, partners *groups, withFresh bool) (phase, error) {
	if !withFresh {
		res, err := load(url, legit, o.conns, d, loadOptions{})
		return phase{legit: res}, err
	}
	tokens := make(chan struct{}, 1<<16)
	var done atomic.Int64
	onOK := func() {
		if done.Add(1)%freshEvery == 0 {
			select {
			case tokens <- struct{}{}:
			default:
			}
		}
	}
	stop := make(chan struct{})
	var fr, pr freshResult
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		fr = freshPool(url, fresh, o.freshConns, tokens, stop)
	}()
	go func() {
		defer wg.Done()
		pr = newPartners(strings.TrimSuffix(url, mixPath)+partnerPath, partners, stop)
	}()
	res, err := load(url, legit, o.conns, d, loadOptions{onOK: onOK})
	close(stop)
	wg.Wait()
	return phase{legit: res, fresh: fr, partner: pr}, err
}

// partnerEvery paces the new partners of the with-fresh phases: every
// this often, a shape the gateway has not seen starts, and its
// partnerMessages messages are sent one after the other (learned at the
// second, templates.learnAfter's default; the rest should hit).
const (
	partnerEvery    = 500 * time.Millisecond
	partnerMessages = 3
)

// partnerPath is the new partners' route: the mix's policy, hence its
// template store and DOM share, but lookups of its own, so that the mix
// route's hit ratio is the legitimate load's and the partners' is theirs.
const partnerPath = "/partner"

// groups hands out each new partner's messages once.
type groups struct {
	all [][]request
	n   atomic.Int64
}

func (g *groups) next() ([]request, bool) {
	i := g.n.Add(1) - 1
	if i >= int64(len(g.all)) {
		return nil, false
	}
	return g.all[i], true
}

// partners signs n new partners' messages (testtraffic.NewPartnerWith), each
// partner with the next of p.partnerKeys, round robin, or with the mix's
// key when there are none.
func (p *pools) partners(n int) (*groups, error) {
	g := testtraffic.New(p.seed<<24|p.n.Add(1)<<8, p.kp, time.Now)
	out := &groups{all: make([][]request, n)}
	for i := range out.all {
		kp := p.kp
		if len(p.partnerKeys) > 0 {
			kp = p.partnerKeys[i%len(p.partnerKeys)]
		}
		ms, err := g.NewPartnerWith(kp, partnerMessages)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			out.all[i] = append(out.all[i], request{body: m.Signed, soap12: bytes.Contains(m.Plain[:min(len(m.Plain), 300)], []byte(soap12NS))})
		}
	}
	return out, nil
}

// newPartners starts a new partner every partnerEvery until stop, each
// sending its messages in turn on a connection of its own, as a partner's
// client does, and counts the answers: every one should be accepted, a
// 503 is a legitimate new partner shed with the fresh shapes.
func newPartners(url string, src *groups, stop <-chan struct{}) freshResult {
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	tick := time.NewTicker(partnerEvery)
	defer tick.Stop()
	var pr freshResult
	for {
		msgs, ok := src.next()
		if !ok {
			pr.dry = true
			return pr
		}
		for _, rq := range msgs {
			status, err := post(client, url, rq, false)
			pr.count(status, err)
		}
		select {
		case <-stop:
			return pr
		case <-tick.C:
		}
	}
}

// freshPool sends one fresh-shape message per token from conns
// connections of its own until stop, and counts the answers: a validly
// signed fresh message is accepted, a garbage one refused.
func freshPool(url string, src *once, conns int, tokens <-chan struct{}, stop <-chan struct{}) freshResult {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var fr freshResult
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-tokens:
				}
				rq, ok := src.next()
				if !ok {
					mu.Lock()
					fr.dry = true
					mu.Unlock()
					return
				}
				status, err := post(client, url, rq, false)
				mu.Lock()
				fr.count(status, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return fr
}

// freshReport is what the fresh-shape scenario measured: each round's
// phases, and over all rounds, per phase (keyed by with-fresh), the mix
// route's template lookups and the sheds by route and reason; the new
// partners' lookups; the templates held at the end; how many keys of
// their own the new partners signed with.
type freshReport struct {
	rounds       []map[bool]phase
	looks        map[bool]lookups
	partnerLooks lookups
	shed         map[bool]map[string]sheds
	held         float64
	partnerKeys  int
}

// reportFresh prints the phases and the loss, and returns the summary row:
// legitimate req/s alone in the plain proxy's column (the baseline), with
// fresh traffic in wssgw's, and the share removed in the ratio's.
func reportFresh(o options, rep freshReport) string {
	rounds, looks, held := rep.rounds, rep.looks, rep.held
	fmt.Printf("bench-proxy fresh-shape: wssgw only, legitimate mix from %d connections; fresh-shape pool of %d connections paced to 1 per %d legitimate; %d round(s) x %s per phase, in %d alternating slices\n",
		o.conns, o.freshConns, freshEvery, o.rounds, o.duration, max(1, o.freshSlices))
	fmt.Printf("wssgw: server.memory.domShare %s (-dom-share), server.memory.firstSightShare %s (-first-sight-share); fresh-shape flood signed with the mix's key, new partners with %s (-partner-keys)\n",
		orDefault(o.domShare), orDefault(o.firstSightShare), partnerKeysDesc(rep.partnerKeys))
	all := map[bool]phase{}
	for _, withFresh := range []bool{false, true} {
		ps := make([]phase, len(rounds))
		for r := range rounds {
			ps[r] = rounds[r][withFresh]
		}
		all[withFresh] = mergePhases(ps)
	}
	for r, ph := range rounds {
		cpu := ""
		if perLegit, extra, ok := freshCPU(ph[false], ph[true]); ok {
			// Per round too: the spread shows how far the total can be
			// trusted on a shared machine.
			cpu = fmt.Sprintf("; a fresh-shape message %.2f × a legitimate one in wssgw CPU", extra/perLegit)
		}
		fmt.Printf("round %d: legitimate %.0f req/s alone, %.0f with fresh: %.1f %% removed%s\n",
			r+1, ph[false].legit.rps, ph[true].legit.rps, 100*(1-ph[true].legit.rps/ph[false].legit.rps), cpu)
	}
	fmt.Printf("%-22s %10s %10s %10s %8s %10s %8s %s\n", "phase (all rounds)", "legit/s", "p50", "p99", "errors", "fresh/s", "share", "fresh accepted/refused/shed/errors")
	for _, withFresh := range []bool{false, true} {
		ph := all[withFresh]
		name := "legitimate alone"
		if withFresh {
			name = "legitimate + fresh"
		}
		fr := ph.fresh
		share := float64(fr.sent) / float64(max(1, fr.sent+ph.legit.ok))
		fmt.Printf("%-22s %10.0f %10s %10s %8d %10.0f %7.1f%% %s\n", name, ph.legit.rps, round(ph.legit.p50), round(ph.legit.p99),
			ph.legit.errors, float64(fr.sent)/ph.legit.elapsed.Seconds(), 100*share, fr)
		if ph.legit.firstErr != nil {
			fmt.Printf("first error, %s: %v\n", name, ph.legit.firstErr)
		}
		if ph.legit.exhausted || fr.dry {
			fmt.Printf("note: %s ran out of pre-signed messages before a deadline (it outran 1.5 × the fastest rate seen before it, or -pool-max)\n", name)
		}
	}
	// wssgw's own count of what it shed, by reason: which bound turned
	// the 503s above away (the clients see only the status).
	for _, withFresh := range []bool{false, true} {
		name := "legitimate alone"
		if withFresh {
			name = "legitimate + fresh"
		}
		var parts []string
		for _, r := range shedRoutes {
			parts = append(parts, fmt.Sprintf("route %s: %s", r, rep.shed[withFresh][r]))
		}
		fmt.Printf("sheds by reason (%s), %s: %s\n", metrics.NameOverloadRejections, name, strings.Join(parts, "; "))
	}
	// The new partners' shapes are as new to wssgw as the fresh ones:
	// the DOM share must not shed them with the flood (issue 14).
	pr := all[true].partner
	fmt.Printf("new partners beside the fresh shapes (1 new shape per %s, %d messages each, %s): accepted/refused/shed/errors %s; their template lookups: %s\n",
		partnerEvery, partnerMessages, partnerKeysDesc(rep.partnerKeys), pr, rep.partnerLooks)
	reportFreshCPU(all)
	fmt.Printf("template lookups, alone phases: %s\n", looks[false])
	fmt.Printf("template lookups, with-fresh phases (legitimate and fresh): %s; templates held after: %.0f\n", looks[true], held)
	// Every fresh message is a new shape, so a miss: the legitimate
	// requests' own hit ratio is the hits over the rest. A shed one (503)
	// or one that failed on the way was not counted as a lookup.
	fr := all[true].fresh
	freshLooked := fr.accepted + fr.refused
	if legit := looks[true].total() - float64(freshLooked); legit > 0 {
		fmt.Printf("legitimate hit ratio in the with-fresh phases: %.3f (hits over lookups less the %d fresh messages verified, each a miss)\n",
			looks[true][metrics.LookupHit]/legit, freshLooked)
	}
	a, w := all[false].legit, all[true].legit
	removed := 100 * (1 - w.rps/a.rps)
	verdict := "met"
	if removed > 10 {
		verdict = "NOT MET"
	}
	fmt.Printf("legitimate throughput removed: %.1f %% (goal: <= 10 %%, %s); legitimate p99 %s -> %s\n",
		removed, verdict, round(a.p99), round(w.p99))
	hit := "–"
	if t := looks[false].total(); t > 0 {
		hit = fmt.Sprintf("%.3f alone", looks[false][metrics.LookupHit]/t)
	}
	return fmt.Sprintf("| fresh-shape: wssgw, legitimate alone → with 10 %% fresh | %.0f | %.0f | **%.1f %% removed** (≤ 10 %%, %s) | %s / %s | %s / %s | %s |",
		a.rps, w.rps, removed, verdict, round(a.p50), round(w.p50), round(a.p99), round(w.p99), hit)
}

// reportFreshCPU prints wssgw's CPU per legitimate request alone and what
// each fresh-shape message added beside the legitimate load: the cost the
// fresh traffic takes from the legitimate, steadier than requests/s.
func reportFreshCPU(all map[bool]phase) {
	perLegit, extra, ok := freshCPU(all[false], all[true])
	if !ok {
		return
	}
	fmt.Printf("wssgw CPU: %.0f µs per legitimate request alone; with fresh, %.0f µs more per fresh-shape or new-partner message (%.2f × a legitimate one)\n",
		perLegit/1e3, extra/1e3, extra/perLegit)
}

// freshCPU is wssgw's CPU per legitimate request in phase a (alone), and
// what each fresh-shape or new-partner message of phase w (with fresh)
// added to it, in nanoseconds; false when the CPU was not measured.
func freshCPU(a, w phase) (perLegit, extra float64, ok bool) {
	if a.cpu <= 0 || w.cpu <= 0 || a.legit.ok == 0 {
		return 0, 0, false
	}
	perLegit = float64(a.cpu) / float64(a.legit.ok)
	other := w.fresh.sent + w.partner.sent
	extra = (float64(w.cpu) - perLegit*float64(w.legit.ok)) / float64(max(1, other))
	return perLegit, extra, true
}

// orDefault is a flag's value, or "default" when it was not set.
func orDefault(v string) string {
	if v == "" {
		return "default"
	}
	return v
}

// partnerKeysDesc says whose keys the new partners signed with.
func partnerKeysDesc(n int) string {
	if n == 0 {
		return "the mix's key"
	}
	return fmt.Sprintf("%d keys of their own", n)
}

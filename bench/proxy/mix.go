package main

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testtraffic"
)

// mixPath is the route of the realistic mix: policy mix, with the replay
// store on (its default), as deployed.
const mixPath = "/mix"

// mixPolicy is the policy of the mix route: the demo CA, the partner
// certificate known for the stacks that name it by thumbprint, SKI or
// IssuerSerial, and the fresh-shape scenario's new partners' self-signed
// certificates pinned (partners.go). Replay and the template store are at
// their defaults, so the gateway learns at its configured rate and refuses
// a second delivery. Only maxAge differs (default 5m): on a busy machine
// signing a scenario's messages can take minutes, and a message must not
// expire before it is sent. The replay store remembers every message of a
// run either way, so its cost is the same.
const mixPolicy = `  mix:
    require: [signature, timestamp]
    timestamp: {maxAge: 30m}
    trust: {caFiles: [%q], knownCertFiles: [%q], pinnedCertFiles: %s}
`

// pools signs the scenarios' messages. Every message is signed when asked
// for, after the gateway started: the memory replay store refuses, for
// its timestamp window, messages created before it started (issue 16).
type pools struct {
	kp *wcrypto.KeyPair
	// partnerKeys sign the fresh-shape scenario's new partners, round
	// robin; none: kp does (partners.go).
	partnerKeys []*wcrypto.KeyPair
	seed        uint64
	n           atomic.Uint64 // pools made, so no two draw the same stream
}

func newPools(keys string, seed uint64) (*pools, error) {
	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{
		CertFile: filepath.Join(keys, "partner.crt"), KeyFile: filepath.Join(keys, "partner.key")})
	if err != nil {
		return nil, err
	}
	return &pools{kp: kp, seed: seed}, nil
}

// make signs n messages drawn by draw, on every core (signing is not
// measured; the scenario's load starts after). Message i comes from
// generator i mod cores, so the pool is in signing order, roughly: a
// once source hands the oldest Timestamps out first.
func (p *pools) make(what string, n int, draw func(g *testtraffic.Generator, i int) (testtraffic.Message, error)) ([]request, error) {
	start := time.Now()
	pool := p.n.Add(1)
	w := runtime.GOMAXPROCS(0)
	out := make([]request, n)
	errs := make([]error, w)
	var bytesTotal atomic.Int64
	var wg sync.WaitGroup
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := testtraffic.New(p.seed<<24|pool<<8|uint64(k), p.kp, time.Now)
			for i := k; i < n; i += w {
				m, err := draw(g, i)
				if err != nil {
					errs[k] = err
					return
				}
				out[i] = request{body: m.Signed, soap12: bytes.Contains(m.Plain[:min(len(m.Plain), 300)], []byte(soap12NS))}
				bytesTotal.Add(int64(len(m.Signed)))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	fmt.Printf("  (signed %d %s messages, mean %.1f KiB, in %s on %d cores; not measured)\n",
		n, what, float64(bytesTotal.Load())/float64(max(n, 1))/1024, time.Since(start).Round(100*time.Millisecond), w)
	return out, nil
}

const soap12NS = "http://www.w3.org/2003/05/soap-envelope"

func nextMix(g *testtraffic.Generator, _ int) (testtraffic.Message, error) { return g.Next() }

// warmupPool is how many messages to sign for one warm-up: more than a
// fast gateway uses in o.warmup; a warm-up that runs dry just ends early.
func warmupPool(o options) int {
	return max(300, int(o.warmup.Seconds()*4000))
}

// refill keeps a once source stocked: before each measured run it signs
// what the run may need, 1.5 × the fastest rate seen × -duration (capped
// by -pool-max), so that signing happens between runs, never during one,
// and the messages are fresh. A run that still runs dry ends early and
// says so.
type refill struct {
	o    options
	p    *pools
	what string
	draw func(g *testtraffic.Generator, i int) (testtraffic.Message, error)
	src  *once
	rate float64 // requests/s the source must feed
	need float64 // -durations each ensure stocks for; 0 is 1
}

func (r *refill) ensure() error { return r.ensureAtLeast(r.want()) }

// want is the stock for r.need × -duration at 1.5 × r.rate.
func (r *refill) want() int {
	return min(int(r.rate*max(1, r.need)*r.o.duration.Seconds()*1.5)+4*r.o.conns, r.o.poolMax)
}

// ensureAtLeast refills to want when fewer than n messages are left.
func (r *refill) ensureAtLeast(n int) error {
	rest := r.src.rest()
	if n <= len(rest) {
		return nil
	}
	more, err := r.p.make(r.what, max(n, r.want())-len(rest), r.draw)
	if err != nil {
		return err
	}
	r.src.reqs = append(append([]request(nil), rest...), more...)
	r.src.n.Store(0)
	return nil
}

// forRun is how many messages a run of d at 1.5 × r.rate needs.
func (r *refill) forRun(d time.Duration) int {
	return int(r.rate*d.Seconds()*1.5) + 4*r.o.conns
}

// saw raises the rate to a run's, if faster.
func (r *refill) saw(res result) { r.rate = max(r.rate, res.rps) }

// runMix compares wssgw and the plain proxy on the realistic signed mix
// (issue 14): each message is sent to wssgw once, since its replay store
// is on; the plain proxy cycles over the same bytes.
func runMix(o options, env *environment) error {
	fmt.Println()
	fmt.Println("== signed-mix: the realistic signed mix (internal/testtraffic), replay store on")
	warm, err := env.pools.make("warm-up", warmupPool(o), nextMix)
	if err != nil {
		return err
	}
	plainURL, gwURL := "http://"+env.plain+mixPath, "http://"+env.gw+mixPath
	pr, err := load(plainURL, &cycle{reqs: warm}, o.conns, o.warmup, loadOptions{})
	if err != nil {
		return fmt.Errorf("signed-mix warm-up, plain: %w", err)
	}
	wr, err := load(gwURL, &once{reqs: warm}, o.conns, o.warmup, loadOptions{})
	if err != nil {
		return fmt.Errorf("signed-mix warm-up, wssgw: %w", err)
	}
	gwSrc := &once{}
	// A cold gateway's warm-up rate understates its rate once warm; the
	// plain proxy's rate on the same messages bounds it better.
	stock := &refill{o: o, p: env.pools, what: "signed-mix", draw: nextMix, src: gwSrc, rate: max(wr.rps, pr.rps)}
	if err := stock.ensure(); err != nil {
		return err
	}
	first := gwSrc.reqs[0]
	targets := []target{{"plain ReverseProxy", plainURL, &cycle{reqs: gwSrc.reqs}, env.plainPID}, {"wssgw", gwURL, gwSrc, env.gwPID}}
	before, _, err := scrape(env.admin, "mix", "mix")
	if err != nil {
		return err
	}
	prof := &profileOnce{o: o, admin: env.admin}
	hooks := roundHooks{
		before: func(i int) error {
			if i == 1 {
				if err := stock.ensure(); err != nil {
					return err
				}
				prof.start()
			}
			return nil
		},
		after: func(i int, res result) {
			if i == 1 {
				prof.wait()
				stock.saw(res)
			}
		},
	}
	results, err := rounds(o, targets, hooks)
	if err != nil {
		return fmt.Errorf("signed-mix: %w", err)
	}
	after, held, err := scrape(env.admin, "mix", "mix")
	if err != nil {
		return err
	}
	sc := scenario{name: "signed-mix", goal: 0.8, lookupsOf: "measured rounds",
		desc: "realistic signed mix (each message signed after start-up and sent to wssgw once)"}
	l := lookups{}
	l.add(before, after)
	env.summary = append(env.summary, report(o, sc, targets, results, l))
	fmt.Printf("templates held after signed-mix: %.0f\n", held)
	// The fresh-shape scenario starts from what is left, at this rate.
	env.mixRate, env.mixLeft = stock.rate, gwSrc.rest()
	return replayRefused(gwURL, first)
}

// replayRefused sends a message wssgw already accepted and expects a
// refusal: the proof that the scenario ran with the replay store on.
func replayRefused(url string, rq request) error {
	status, err := post(http.DefaultClient, url, rq, false)
	if err != nil {
		return err
	}
	if status == http.StatusOK {
		return fmt.Errorf("wssgw accepted a message twice: the replay store is off")
	}
	fmt.Printf("replay check: a message sent again was refused (status %d), so every measured request was a first delivery\n", status)
	return nil
}

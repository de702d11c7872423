package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestOnce: concurrent runs sharing a once source get every message
// exactly once, then none: no measured request can be a replay.
func TestOnce(t *testing.T) {
	reqs := make([]request, 1000)
	for i := range reqs {
		reqs[i] = request{body: []byte(fmt.Sprint(i))}
	}
	src := &once{reqs: reqs}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				rq, ok := src.next()
				if !ok {
					return
				}
				mu.Lock()
				seen[string(rq.body)]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != len(reqs) {
		t.Fatalf("%d distinct messages handed out, want %d", len(seen), len(reqs))
	}
	for b, n := range seen {
		if n != 1 {
			t.Fatalf("message %s handed out %d times", b, n)
		}
	}
	if rest := src.rest(); len(rest) != 0 {
		t.Errorf("%d messages left after the source ran dry", len(rest))
	}
}

// TestScrape: the lookups of one route are read by result, other routes
// and metrics ignored, the policy's template count read, and a diff of
// two scrapes is what happened between them.
func TestScrape(t *testing.T) {
	var hits = 10
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `# HELP wssgw_template_lookups_total x
wssgw_template_lookups_total{result="hit",route="mix"} %d
wssgw_template_lookups_total{result="no_template",route="mix"} 5
wssgw_template_lookups_total{result="hit",route="signed"} 1000
wssgw_templates{policy="mix"} 42
wssgw_templates{policy="partner"} 7
wssgw_template_lookups_totalx{result="hit",route="mix"} 99
`, hits)
	}))
	defer srv.Close()
	admin := strings.TrimPrefix(srv.URL, "http://")
	before, held, err := scrape(admin, "mix", "mix")
	if err != nil {
		t.Fatal(err)
	}
	if before["hit"] != 10 || before["no_template"] != 5 || len(before) != 2 || held != 42 {
		t.Fatalf("scrape = %v, held %v; want hit 10, no_template 5, held 42", before, held)
	}
	hits = 25
	after, _, err := scrape(admin, "mix", "mix")
	if err != nil {
		t.Fatal(err)
	}
	l := lookups{}
	l.add(before, after)
	if l["hit"] != 15 || l.total() != 15 {
		t.Fatalf("diff = %v, want 15 hits and nothing else", l)
	}
	if got, want := l.String(), "hit ratio 1.000 (hit 15)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestCPUPerRequest: a target's CPU per request is measured only when
// every run measured it.
func TestCPUPerRequest(t *testing.T) {
	if got := cpuPerRequest([]result{{cpu: time.Second, ok: 1000}, {cpu: time.Second, ok: 1000}}); got != time.Millisecond {
		t.Fatalf("cpuPerRequest = %v, want 1ms", got)
	}
	if got := cpuPerRequest([]result{{cpu: time.Second, ok: 1000}, {ok: 1000}}); got != 0 {
		t.Fatalf("cpuPerRequest with an unmeasured run = %v, want 0", got)
	}
}

// TestScrapeSheds: the overload rejections of the asked routes are read
// by reason, other routes and metrics ignored; a diff of two scrapes is
// what was shed between them; and the report names the DOM share, queue
// and first-sight reasons even when wssgw has no such series, then any
// other reason.
func TestScrapeSheds(t *testing.T) {
	share := 3
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `# HELP wssgw_overload_rejections_total x
# TYPE wssgw_overload_rejections_total counter
wssgw_overload_rejections_total{reason="dom_queue",route="mix"} 1
wssgw_overload_rejections_total{reason="dom_share",route="mix"} %d
wssgw_overload_rejections_total{reason="memory",route="mix"} 0
wssgw_overload_rejections_total{reason="dom_share",route="partner"} 2
wssgw_overload_rejections_total{reason="dom_share",route="signed"} 50
wssgw_template_lookups_total{result="hit",route="mix"} 10
`, share)
	}))
	defer srv.Close()
	admin := strings.TrimPrefix(srv.URL, "http://")
	before, err := scrapeSheds(admin, "mix", "partner")
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 2 || before["mix"]["dom_share"] != 3 || before["mix"]["dom_queue"] != 1 || before["partner"]["dom_share"] != 2 {
		t.Fatalf("scrapeSheds = %v; want mix dom_share 3, dom_queue 1, partner dom_share 2, no other route", before)
	}
	share = 10
	after, err := scrapeSheds(admin, "mix", "partner")
	if err != nil {
		t.Fatal(err)
	}
	d := sheds{}
	d.add(before["mix"], after["mix"])
	if got, want := d.String(), "dom_share 7, dom_queue 0, first_sight 0"; got != want {
		t.Errorf("diff = %q, want %q", got, want)
	}
	if got, want := after["mix"].String(), "dom_share 10, dom_queue 1, first_sight 0, memory 0"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

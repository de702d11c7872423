package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// result is one scenario's outcome.
type result struct {
	kind                        string
	conc                        int
	ok, unavailable, other      int64
	retryAfter                  bool // every 503 carried Retry-After
	smallOK, smallAll           int64
	peak                        int64 // VmHWM of wssgw
	budget                      float64
	rejectedMemory, rejectedDOM float64
	firstErr                    error
}

func run(o options) error {
	b, err := makeBodies(o)
	if err != nil {
		return fmt.Errorf("signing the messages: %w", err)
	}
	caFile, err := filepath.Abs(filepath.Join(o.keys, "ca.crt"))
	if err != nil {
		return err
	}
	backend, addr, err := startBackend()
	if err != nil {
		return err
	}
	defer func() { _ = backend.Process.Kill(); _ = backend.Wait() }()
	fmt.Printf("bench-memory: %d-byte signed requests (%s), %d per connection, with %d connections of %d-byte signed requests throughout; wssgw GOMEMLIMIT=%s, budget %s\n",
		len(b.valid), joinKinds(o.kinds), o.rounds, o.smallConns, len(b.small[0]), o.goMemLimit, budgetLabel(o.budget))
	var results []result
	for _, kind := range o.kinds {
		body := b.valid
		if kind == "tampered" {
			body = b.tampered
		} else if kind != "valid" {
			return fmt.Errorf("-kinds: unknown kind %q", kind)
		}
		for _, c := range o.conc {
			r, err := scenario(o, addr, caFile, kind, body, b.small, c)
			if err != nil {
				return fmt.Errorf("%s x%d: %w", kind, c, err)
			}
			results = append(results, r)
		}
	}
	report(o, results)
	return nil
}

func joinKinds(k []string) string {
	s := ""
	for i, x := range k {
		if i > 0 {
			s += " and "
		}
		s += x
	}
	return s
}

func budgetLabel(b string) string {
	if b == "" {
		return "wssgw's default"
	}
	return b
}

// scenario runs conc connections sending o.rounds large bodies each
// against a fresh wssgw, with the small stream running until they are done.
func scenario(o options, backend, caFile, kind string, large []byte, small [][]byte, conc int) (result, error) {
	g, err := launchWssgw(o, backend, caFile)
	if err != nil {
		return result{}, err
	}
	defer g.Stop()
	r := result{kind: kind, conc: conc, retryAfter: true}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc + o.smallConns, DisableCompression: true}, Timeout: 2 * time.Minute}
	defer client.CloseIdleConnections()
	url := g.Data + "/signed"
	// Warm up: the small messages' template is learned on the DOM engine.
	for _, s := range small[:4] {
		if _, _, err := post(client, url, s); err != nil {
			return r, fmt.Errorf("warm-up: %w", err)
		}
	}
	var mu sync.Mutex
	done := make(chan struct{})
	var smallWG sync.WaitGroup
	var smallOK, smallAll atomic.Int64
	for c := range o.smallConns {
		smallWG.Add(1)
		go func() {
			defer smallWG.Done()
			for n := c; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				status, _, err := post(client, url, small[n%len(small)])
				smallAll.Add(1)
				if err == nil && status == http.StatusOK {
					smallOK.Add(1)
				}
			}
		}()
	}
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range o.rounds {
				status, h, err := post(client, url, large)
				mu.Lock()
				switch {
				case err != nil:
					r.other++
					if r.firstErr == nil {
						r.firstErr = err
					}
				case status == http.StatusServiceUnavailable:
					r.unavailable++
					r.retryAfter = r.retryAfter && h.Get("Retry-After") != ""
				case status == http.StatusOK && kind == "valid", status == http.StatusInternalServerError && kind == "tampered":
					r.ok++ // accepted, or refused as a security fault
				default:
					r.other++
					if r.firstErr == nil {
						r.firstErr = fmt.Errorf("status %d", status)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(done)
	smallWG.Wait()
	r.smallOK, r.smallAll = smallOK.Load(), smallAll.Load()
	if r.peak, err = g.PeakRSS(); err != nil {
		return r, err
	}
	if r.budget, err = metric(g.Admin, "wssgw_memory_budget_bytes"); err != nil {
		return r, err
	}
	r.rejectedMemory, _ = metric(g.Admin, "wssgw_overload_rejections_total", `reason="memory"`)
	r.rejectedDOM, _ = metric(g.Admin, "wssgw_overload_rejections_total", `reason="dom_queue"`)
	return r, nil
}

func post(client *http.Client, url string, body []byte) (int, http.Header, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header, err
}

func report(o options, rs []result) {
	fmt.Printf("%-9s %5s %9s %6s %6s %6s %7s %10s %11s %9s %9s\n",
		"large", "conc", "answered", "503", "(mem", "dom)", "errors", "small ok", "peak RSS", "/budget", "/limit")
	for _, r := range rs {
		perBudget := "-"
		if r.budget > 0 {
			perBudget = fmt.Sprintf("%.2f", float64(r.peak)/r.budget)
		}
		fmt.Printf("%-9s %5d %9d %6d %6.0f %6.0f %7d %9.1f%% %7.0f MiB %9s %9.2f\n",
			r.kind, r.conc, r.ok, r.unavailable, r.rejectedMemory, r.rejectedDOM, r.other,
			100*float64(r.smallOK)/float64(max(r.smallAll, 1)), float64(r.peak)/(1<<20), perBudget, float64(r.peak)/float64(o.limit))
	}
	worst := int64(0)
	for _, r := range rs {
		worst = max(worst, r.peak)
		if !r.retryAfter {
			fmt.Printf("%s x%d: a 503 without Retry-After\n", r.kind, r.conc)
		}
		if r.firstErr != nil {
			fmt.Printf("%s x%d: first error: %v\n", r.kind, r.conc, r.firstErr)
		}
	}
	fmt.Printf("answered: accepted (valid) or refused with the security fault (tampered); 503: refused by the memory budget or the DOM queue\n")
	fmt.Printf("highest peak RSS %.0f MiB = %.2f of the %d MiB limit (goal: < 1, with small requests still served)\n",
		float64(worst)/(1<<20), float64(worst)/float64(o.limit), o.limit>>20)
}

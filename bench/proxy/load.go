package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// request is one message of a scenario, with its SOAP version (the
// Content-Type a gateway checks against the envelope).
type request struct {
	body   []byte
	soap12 bool
}

// source hands out the messages a load run sends.
type source interface {
	// next returns the next message, or false when there is none left.
	next() (request, bool)
}

// cycle repeats its messages for ever: for the plain proxy, which keeps no
// replay store, and for scenarios whose route has replay off.
type cycle struct {
	reqs []request
	n    atomic.Int64
}

func (c *cycle) next() (request, bool) {
	return c.reqs[int((c.n.Add(1)-1)%int64(len(c.reqs)))], true
}

// once hands out each message once, across every run that shares it, as a
// replay store demands: a message sent twice is a (correctly) refused
// replay, not load.
type once struct {
	reqs []request
	n    atomic.Int64
}

func (o *once) next() (request, bool) {
	i := o.n.Add(1) - 1
	if i >= int64(len(o.reqs)) {
		return request{}, false
	}
	return o.reqs[i], true
}

// rest are the messages not handed out yet.
func (o *once) rest() []request { return o.reqs[min(len(o.reqs), int(o.n.Load())):] }

// result is one measured load run.
type result struct {
	rps       float64
	p50, p99  time.Duration
	ok        int
	errors    int
	firstErr  error
	elapsed   time.Duration
	exhausted bool            // the source ran dry before the deadline
	cpu       time.Duration   // the target process's CPU during the run (cpu.go); 0 when not measured
	lat       []time.Duration // every successful request's latency, sorted
}

// merge is one result over several runs: their requests over their summed
// time, percentiles over all their latencies.
func merge(rs []result) result {
	var m result
	for _, r := range rs {
		m.ok += r.ok
		m.errors += r.errors
		m.elapsed += r.elapsed
		m.exhausted = m.exhausted || r.exhausted
		m.lat = append(m.lat, r.lat...)
		if m.firstErr == nil {
			m.firstErr = r.firstErr
		}
	}
	if m.elapsed > 0 {
		m.rps = float64(m.ok) / m.elapsed.Seconds()
	}
	if len(m.lat) > 0 {
		sort.Slice(m.lat, func(i, j int) bool { return m.lat[i] < m.lat[j] })
		m.p50, m.p99 = m.lat[len(m.lat)/2], m.lat[len(m.lat)*99/100]
	}
	return m
}

// loadOptions are the optional parts of a load run.
type loadOptions struct {
	// onOK runs after each successful request (the fresh-shape
	// scenario's pacing).
	onOK func()
}

// load sends messages from src to url from conns keep-alive connections
// for d (or until src runs dry), and measures throughput and latency.
func load(url string, src source, conns int, d time.Duration, lo loadOptions) (result, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	deadline := time.Now().Add(d)
	lat := make([][]time.Duration, conns)
	errs := make([]int, conns)
	var errMu sync.Mutex
	var firstErr error
	var dry atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				rq, ok := src.next()
				if !ok {
					dry.Store(true)
					return
				}
				t0 := time.Now()
				if _, err := post(client, url, rq, true); err != nil {
					errs[c]++
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
					continue
				}
				lat[c] = append(lat[c], time.Since(t0))
				if lo.onOK != nil {
					lo.onOK()
				}
			}
		}()
	}
	wg.Wait()
	res := result{firstErr: firstErr, elapsed: time.Since(start), exhausted: dry.Load()}
	var all []time.Duration
	for c := range conns {
		all = append(all, lat[c]...)
		res.errors += errs[c]
	}
	if len(all) == 0 {
		return res, fmt.Errorf("no successful request (%d errors; first: %v)", res.errors, firstErr)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	res.ok = len(all)
	res.rps = float64(len(all)) / res.elapsed.Seconds()
	res.p50, res.p99 = all[len(all)/2], all[len(all)*99/100]
	res.lat = all
	return res, nil
}

// post sends one message and reads the whole answer. With want200, any
// other status is an error; without, the status is returned (a fresh-shape
// message may be refused).
func post(client *http.Client, url string, rq request, want200 bool) (int, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(rq.body))
	if err != nil {
		return 0, err
	}
	if rq.soap12 {
		req.Header.Set("Content-Type", `application/soap+xml; charset=utf-8; action="urn:bench/Echo"`)
	} else {
		req.Header.Set("Content-Type", "text/xml; charset=utf-8")
		req.Header.Set("SOAPAction", `"urn:bench/Echo"`)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && want200 && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp.StatusCode, err
}

// soapBody is a SOAP 1.1 envelope of exactly size bytes (at least its markup).
func soapBody(size int) []byte {
	const head = `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><m:Echo xmlns:m="urn:bench"><m:data>`
	const tail = `</m:data></m:Echo></soap:Body></soap:Envelope>`
	n := max(size-len(head)-len(tail), 0)
	return []byte(head + strings.Repeat("x", n) + tail)
}

// requests are SOAP 1.1 messages.
func requests(bodies ...[]byte) []request {
	out := make([]request, len(bodies))
	for i, b := range bodies {
		out[i] = request{body: b}
	}
	return out
}

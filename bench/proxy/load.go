package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// result is one measured load run.
type result struct {
	rps      float64
	p50, p99 time.Duration
	errors   int
	firstErr error
}

// load sends bodies (in turn, each connection from its own offset) to url
// from conns keep-alive connections for d, bounded in time, and measures
// throughput and latency.
func load(url string, bodies [][]byte, conns int, d time.Duration) (result, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	deadline := time.Now().Add(d)
	lat := make([][]time.Duration, conns)
	errs := make([]int, conns)
	var errMu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := c; time.Now().Before(deadline); n++ {
				t0 := time.Now()
				if err := post(client, url, bodies[n%len(bodies)]); err != nil {
					errs[c]++
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
					continue
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	res := result{firstErr: firstErr}
	for c := range conns {
		all = append(all, lat[c]...)
		res.errors += errs[c]
	}
	if len(all) == 0 {
		return res, fmt.Errorf("no successful request (%d errors)", res.errors)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	res.rps = float64(len(all)) / elapsed.Seconds()
	res.p50, res.p99 = all[len(all)/2], all[len(all)*99/100]
	return res, nil
}

func post(client *http.Client, url string, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("SOAPAction", `"urn:bench/Echo"`)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return err
}

// soapBody is a SOAP 1.1 envelope of exactly size bytes (at least its markup).
func soapBody(size int) []byte {
	const head = `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><m:Echo xmlns:m="urn:bench"><m:data>`
	const tail = `</m:data></m:Echo></soap:Body></soap:Envelope>`
	n := max(size-len(head)-len(tail), 0)
	return []byte(head + strings.Repeat("x", n) + tail)
}

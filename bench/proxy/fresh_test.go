package main

import (
	"errors"
	"math"
	"net/http"
	"testing"
	"time"
)

// TestFreshResultCount: a 503 is shed (no verdict: the DOM share or queue
// was full), any other non-200 status refused (a fault), a failed request
// an error; so a share that sheds legitimate new partners shows as shed,
// not as refused.
func TestFreshResultCount(t *testing.T) {
	var f freshResult
	f.count(http.StatusOK, nil)
	f.count(http.StatusServiceUnavailable, nil)
	f.count(http.StatusInternalServerError, nil)
	f.count(http.StatusBadRequest, nil)
	f.count(0, errors.New("connection reset"))
	if got, want := f.String(), "1/2/1/1"; got != want || f.sent != 5 {
		t.Fatalf("accepted/refused/shed/errors %s (sent %d), want %s (sent 5)", got, f.sent, want)
	}
	var all freshResult
	all.add(f)
	all.add(freshResult{sent: 1, shed: 1, dry: true})
	if got, want := all.String(), "1/2/2/1"; got != want || all.sent != 6 || !all.dry {
		t.Fatalf("merged %s (sent %d, dry %v), want %s (sent 6, dry)", got, all.sent, all.dry, want)
	}
}

// TestFreshCPU: the fresh-shape messages' CPU is what the with-fresh phase
// used beyond its legitimate requests at the alone phase's cost.
func TestFreshCPU(t *testing.T) {
	alone := phase{legit: result{ok: 1000}, cpu: 400 * time.Millisecond} // 400 µs each
	for _, c := range []struct {
		name      string
		a, w      phase
		ok        bool
		perLegit  float64
		extraPerL float64
	}{
		{"ok/fresh-as-dear-as-legitimate", alone,
			phase{legit: result{ok: 900}, fresh: freshResult{sent: 90}, partner: freshResult{sent: 10}, cpu: 400 * time.Millisecond}, true, 400e3, 1},
		{"ok/fresh-twice-as-dear", alone,
			phase{legit: result{ok: 900}, fresh: freshResult{sent: 100}, cpu: 440 * time.Millisecond}, true, 400e3, 2},
		{"fail/not-measured", alone, phase{legit: result{ok: 900}, fresh: freshResult{sent: 100}}, false, 0, 0},
		{"fail/no-legitimate-alone", phase{cpu: time.Second}, phase{cpu: time.Second}, false, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			perLegit, extra, ok := freshCPU(c.a, c.w)
			if ok != c.ok {
				t.Fatalf("ok %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			if math.Abs(perLegit-c.perLegit) > 1 || math.Abs(extra/perLegit-c.extraPerL) > 1e-9 {
				t.Fatalf("per legitimate %.0f ns, fresh %.2f × it; want %.0f, %.2f", perLegit, extra/perLegit, c.perLegit, c.extraPerL)
			}
		})
	}
}

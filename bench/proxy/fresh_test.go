package main

import (
	"errors"
	"net/http"
	"testing"
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

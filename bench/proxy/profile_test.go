package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestFreshProfiles(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = w.Write([]byte("profile " + r.URL.Query().Get("seconds")))
	}))
	defer srv.Close()
	admin := strings.TrimPrefix(srv.URL, "http://")
	t.Run("ok/one-per-phase", func(t *testing.T) {
		calls.Store(0)
		file := filepath.Join(t.TempDir(), "fresh.prof")
		p := &freshProfiles{o: options{profile: file}, admin: admin}
		for _, withFresh := range []bool{false, true, true, false, true} {
			p.start(withFresh, 2*time.Second)()
		}
		if n := calls.Load(); n != 2 {
			t.Fatalf("%d profiles fetched, want one per phase", n)
		}
		for _, f := range []string{file, file + ".alone"} {
			b, err := os.ReadFile(f)
			if err != nil || string(b) != "profile 2" {
				t.Fatalf("%s: %q, %v", f, b, err)
			}
		}
	})
	t.Run("ok/none-without-profile", func(t *testing.T) {
		calls.Store(0)
		p := &freshProfiles{admin: admin}
		p.start(true, time.Second)()
		if n := calls.Load(); n != 0 {
			t.Fatalf("%d profiles fetched without -profile", n)
		}
	})
}

package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
)

// profileDuring starts fetching a CPU profile of wssgw (through its admin
// listener's pprof) for one measured round of the signed scenario, so that
// the profile shows wssgw under that load; the returned func waits for it.
func profileDuring(o options, admin string, sc scenario) (wait func()) {
	if o.profile == "" || sc.path != signedPath {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := fetchProfile(admin, o); err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
		}
	}()
	return func() { <-done }
}

func fetchProfile(admin string, o options) error {
	secs := int((o.warmup + o.duration).Seconds())
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", admin, max(secs, 1)))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: %s", resp.Status)
	}
	f, err := os.Create(o.profile)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

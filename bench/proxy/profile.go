package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
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
		if err := fetchProfile(admin, o, o.warmup+o.duration); err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
		}
	}()
	return func() { <-done }
}

// profileOnce profiles wssgw during the first measured wssgw run of the
// signed mix: start is called just before the run, wait just after it.
type profileOnce struct {
	o     options
	admin string
	done  chan struct{}
	used  bool
}

func (p *profileOnce) start() {
	if p.o.profile == "" || p.o.scenario != "mix" || p.used {
		return
	}
	p.used, p.done = true, make(chan struct{})
	go func() {
		defer close(p.done)
		if err := fetchProfile(p.admin, p.o, p.o.duration); err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
		}
	}()
}

func (p *profileOnce) wait() {
	if p.done != nil {
		<-p.done
		p.done = nil
	}
}

func fetchProfile(admin string, o options, d time.Duration) error {
	secs := int(d.Seconds())
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

// freshProfiles profiles wssgw during the fresh-shape scenario's first
// slice of each phase (round 1): -profile's file gets the with-fresh
// slice, the file with ".alone" appended the legitimate mix alone, so
// that `go tool pprof -diff_base <file>.alone <file>` shows what the
// fresh-shape traffic adds. With -fresh-slices 1 each profile covers a
// whole phase of -duration.
type freshProfiles struct {
	o     options
	admin string
	taken map[bool]bool
}

// start profiles the slice about to run, if it is the first of its
// phase; the returned func waits for the profile.
func (p *freshProfiles) start(withFresh bool, d time.Duration) (wait func()) {
	if p.o.profile == "" || p.taken[withFresh] {
		return func() {}
	}
	if p.taken == nil {
		p.taken = map[bool]bool{}
	}
	p.taken[withFresh] = true
	o := p.o
	if !withFresh {
		o.profile += ".alone"
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := fetchProfile(p.admin, o, d); err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
		}
	}()
	return func() { <-done }
}

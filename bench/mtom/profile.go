package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/config"
)

// profileResponse fetches one more, untimed, response of size from the
// gateway of mode m while its admin listener records a CPU profile of
// o.profileSeconds, and writes the profile to o.profile as
// cpu-MODE-SIZE.pprof (go tool pprof bin/wssgw FILE).
func profileResponse(o options, c *http.Client, g *proc.Wssgw, m mode, size int64) error {
	file := filepath.Join(o.profile, fmt.Sprintf("cpu-%s-%s.pprof", m.name, config.ByteSize(size)))
	done := make(chan error, 1)
	go func() {
		done <- saveURL(c, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", g.Admin, o.profileSeconds), file)
	}()
	// The profiler starts when its request arrives; a moment's head start
	// keeps the response's first bytes in the profile.
	time.Sleep(100 * time.Millisecond)
	_, err := fetch(c, m, fileURL(g, m, size), io.Discard)
	if err = errors.Join(err, <-done); err != nil {
		return fmt.Errorf("profiling %s at %s: %w", m.name, config.ByteSize(size), err)
	}
	fmt.Printf("CPU profile of %s at %s: %s\n", m.name, config.ByteSize(size), file)
	return nil
}

func saveURL(c *http.Client, url, file string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

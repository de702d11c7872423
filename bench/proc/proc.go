package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Wssgw is a running gateway process.
type Wssgw struct {
	Cmd   *exec.Cmd
	Data  string // base URL of the data listener
	Admin string // base URL of the admin listener
	dir   string
}

// Start runs bin serve on the configuration that cfg returns for the
// process's own temporary directory (named after prefix; it holds the
// config file and may hold a spool), with env added to this process's
// environment, and waits until it listens. Its log, at the configured
// level, is read and discarded.
func Start(bin, prefix string, env []string, cfg func(dir string) string) (*Wssgw, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "wssgw.yaml")
	if err := os.WriteFile(file, []byte(cfg(dir)), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	g := &Wssgw{Cmd: exec.Command(bin, "serve", "--config", file), dir: dir}
	g.Cmd.Env = append(os.Environ(), env...)
	if err := g.start(); err != nil {
		g.Stop()
		return nil, err
	}
	return g, nil
}

// start starts the process and waits for its listening log line.
func (g *Wssgw) start() error {
	errPipe, err := g.Cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := g.Cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", g.Cmd.Path, err)
	}
	sc := bufio.NewScanner(errPipe)
	var log bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		log.WriteString(line + "\n")
		if strings.Contains(line, `"msg":"listening"`) {
			go func() { _, _ = io.Copy(io.Discard, errPipe) }()
			g.Data, g.Admin = "http://"+jsonField(line, "data"), "http://"+jsonField(line, "admin")
			return nil
		}
	}
	return fmt.Errorf("wssgw exited before listening:\n%s", log.String())
}

// Stop kills the process and removes its directory.
func (g *Wssgw) Stop() {
	if g.Cmd.Process != nil {
		_ = g.Cmd.Process.Kill()
		_ = g.Cmd.Wait()
	}
	_ = os.RemoveAll(g.dir)
}

// PeakRSS is VmHWM of the process, in bytes: the most it has held
// resident since it started.
func (g *Wssgw) PeakRSS() (int64, error) {
	return Status(g.Cmd.Process.Pid, "VmHWM")
}

// Status is a kB field of /proc/PID/status (VmHWM, VmRSS), in bytes.
func Status(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the peak RSS (Linux only): %w", err)
	}
	return statusField(b, field, pid)
}

func statusField(b []byte, field string, pid int) (int64, error) {
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// jsonField is the string value of key in a flat JSON log line.
func jsonField(line, key string) string {
	i := strings.Index(line, `"`+key+`":"`)
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+4:]
	return v[:strings.IndexByte(v, '"')]
}

package main

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

// wssgw is a running gateway process.
type wssgw struct {
	cmd   *exec.Cmd
	dir   string
	data  string // base URL of the data listener
	admin string // base URL of the admin listener
}

// launch runs bin serve on the configuration that cfg returns for the
// process's own temporary directory (config file, spool), and waits until
// it listens.
func launch(bin string, cfg func(dir string) string) (*wssgw, error) {
	dir, err := os.MkdirTemp("", "bench-mtom-")
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "wssgw.yaml")
	if err := os.WriteFile(file, []byte(cfg(dir)), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	g := &wssgw{cmd: exec.Command(bin, "serve", "--config", file), dir: dir}
	if err := g.start(); err != nil {
		g.stop()
		return nil, err
	}
	return g, nil
}

// start starts the process and waits for its listening log line.
func (g *wssgw) start() error {
	errPipe, err := g.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := g.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", g.cmd.Path, err)
	}
	sc := bufio.NewScanner(errPipe)
	var log bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		log.WriteString(line + "\n")
		if strings.Contains(line, `"msg":"listening"`) {
			go func() { _, _ = io.Copy(io.Discard, errPipe) }()
			g.data, g.admin = "http://"+jsonField(line, "data"), "http://"+jsonField(line, "admin")
			return nil
		}
	}
	return fmt.Errorf("wssgw exited before listening:\n%s", log.String())
}

// peakRSS is VmHWM of the process, in bytes: the most it has held
// resident since it started.
func (g *wssgw) peakRSS() (int64, error) {
	return procStatus(g.cmd.Process.Pid, "VmHWM")
}

// procStatus is a kB field of /proc/PID/status, in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the peak RSS (Linux only): %w", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

func (g *wssgw) stop() {
	if g.cmd.Process != nil {
		_ = g.cmd.Process.Kill()
		_ = g.cmd.Wait()
	}
	_ = os.RemoveAll(g.dir)
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

// Package replaytest starts throw-away Redis servers for tests. It is
// imported by tests only.
package replaytest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startTimeout bounds how long a new server may take to answer PING.
const startTimeout = 10 * time.Second

// StartRedis starts redis-server on a free loopback port, without
// persistence, in a temporary directory, and returns its host:port once it
// answers PING. args are appended to the command line, so they can add or
// override options (for example "--requirepass", "secret"). The server is
// killed when the test ends.
//
// Without redis-server on PATH the test is skipped, except under CI
// (CI=true), which installs it: there a silent skip would hide that the
// Redis tests never ran.
func StartRedis(t testing.TB, args ...string) (addr string) {
	t.Helper()
	return StartServer(t, args...).Addr()
}

// Server is a redis-server started by StartServer, which a test can kill
// and start again on the same port, as an operator's restart would.
type Server struct {
	t    testing.TB
	bin  string
	args []string
	port int
	dir  string
	stop func()
}

// StartServer is StartRedis returning the Server, for tests that restart
// it.
func StartServer(t testing.TB, args ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server not found on PATH (CI installs the redis-server package): %v", err)
		}
		t.Skipf("redis-server not found on PATH: %v", err)
	}
	// The free port is found by binding and releasing it, so another
	// process can take it in between; try again with a new one then.
	var last error
	for range 3 {
		port, err := freePort()
		if err != nil {
			last = err
			continue
		}
		s := &Server{t: t, bin: bin, args: args, port: port, dir: t.TempDir()}
		if last = s.start(); last == nil {
			return s
		}
	}
	t.Fatalf("replaytest: %v", last)
	return nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Kill stops the server at once (SIGKILL), as a crash would: what it did
// not persist is lost.
func (s *Server) Kill() { s.stop() }

// Restart kills the server and starts it again on the same port and in
// the same directory: without persistence it comes back empty; with
// persistence options in the StartServer arguments it reloads what it
// had saved.
func (s *Server) Restart() {
	s.t.Helper()
	s.stop()
	if err := s.start(); err != nil {
		s.t.Fatalf("replaytest: restart: %v", err)
	}
}

func (s *Server) start() error {
	logPath := filepath.Join(s.dir, "redis.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()

	argv := append([]string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--daemonize", "no",
	}, s.args...)
	cmd := exec.Command(s.bin, argv...)
	cmd.Dir = s.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}

	addr := s.Addr()
	deadline := time.Now().Add(startTimeout)
	for {
		if ping(addr) == nil {
			s.stop = stop
			s.t.Cleanup(stop)
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("redis-server exited at startup on %s:\n%s", addr, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("redis-server on %s did not answer PING within %v:\n%s", addr, startTimeout, log)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ping sends an inline PING. Any reply counts as ready, an error one too:
// with --requirepass the server answers -NOAUTH, which still means it is up.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "-") {
		return errors.New("unexpected reply to PING: " + strings.TrimSpace(line))
	}
	return nil
}

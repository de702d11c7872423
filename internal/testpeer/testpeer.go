package testpeer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wssgw/wssgw/internal/testvectors"
)

// Job is one job of a peer's batch (or client) command: an id the result
// line repeats and the arguments of one single-shot command.
type Job struct {
	ID   string   `json:"id"`
	Args []string `json:"args"`
}

// Need skips t when err says a peer (what) cannot run here, and fails it
// in CI, where every peer must run.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s unavailable in CI: %v", what, err)
	}
	t.Skipf("%s unavailable: %v", what, err)
}

// Jar builds (or finds cached) the peer interop/<name> with
// interop/build.sh and returns the jar's path.
func Jar(t testing.TB, name string) string {
	t.Helper()
	for _, tool := range []string{"java", "mvn"} {
		_, err := exec.LookPath(tool)
		Need(t, tool, err)
	}
	root, err := testvectors.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(root, "interop", "build.sh"), name)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = errors.Join(err, errors.New(strings.TrimSpace(stderr.String())))
	}
	Need(t, name+" peer build", err)
	return strings.TrimSpace(string(out))
}

// Batch writes jobs to cmd (java -jar peer.jar batch|client ...) as JSON
// lines, runs it, and returns its result lines by their "id". The
// command's exit status is ignored: it exits 1 when any job fails, and
// each result says how. t fails unless every job has a result.
func Batch[J, R any](t testing.TB, cmd *exec.Cmd, jobs []J) map[string]R {
	t.Helper()
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, j := range jobs {
		if err := enc.Encode(j); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = &in, &stderr
	out, _ := cmd.Output()
	res := make(map[string]R, len(jobs))
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var id struct {
			ID string `json:"id"`
		}
		var r R
		if err := json.Unmarshal(sc.Bytes(), &id); err != nil {
			t.Fatalf("peer result %q: %v", sc.Text(), err)
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("peer result %q: %v", sc.Text(), err)
		}
		res[id.ID] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(res) != len(jobs) {
		t.Fatalf("the peer answered %d of %d jobs; stderr:\n%s", len(res), len(jobs), tail(stderr.String()))
	}
	return res
}

// tail is the end of a long stderr, where the JVM's error is.
func tail(s string) string {
	const keep = 8 << 10
	if len(s) > keep {
		return "..." + s[len(s)-keep:]
	}
	return s
}

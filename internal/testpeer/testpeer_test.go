package testpeer

import (
	"os/exec"
	"testing"
)

// TestBatch: cat answers every job with the job itself, so each result
// line carries its job's id and arguments.
func TestBatch(t *testing.T) {
	jobs := []Job{{ID: "a", Args: []string{"sign", "--in", "x"}}, {ID: "b"}}
	res := Batch[Job, Job](t, exec.Command("cat"), jobs)
	if len(res) != 2 || res["a"].Args[2] != "x" || res["b"].ID != "b" {
		t.Fatalf("results %+v", res)
	}
}

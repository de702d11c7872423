package e2e

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoResendCommand: the command line make run prints to send a secured
// request again works as printed, and again: it signs afresh each time, so
// neither the replay store nor the Timestamp refuses the second run.
func TestDemoResendCommand(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to run the printed command")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl to run the printed command")
	}
	cmd := exec.Command(binary, "demo", "--config", "config.example.yaml", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0")
	cmd.Dir = "../.."
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := printedResend(t, bufio.NewScanner(stdout))
	require.True(t, strings.HasPrefix(line, binary+" sign "), line)
	for run := range 2 {
		c := exec.Command(sh, "-c", line)
		c.Dir = "../.."
		out, err := c.CombinedOutput()
		require.NoError(t, err, "run %d: %s", run, out)
		assert.Contains(t, string(out), "PlaceOrderResponse", "run %d", run)
	}
}

// printedResend returns the printed command: a line that starts with the
// binary's sign command and ends in a backslash, and the curl line after it.
func printedResend(t *testing.T, sc *bufio.Scanner) string {
	t.Helper()
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, binary+" sign ") && strings.HasSuffix(l, "\\") && sc.Scan() {
			return l + "\n" + strings.TrimSpace(sc.Text())
		}
	}
	t.Fatal("demo printed no resend command")
	return ""
}

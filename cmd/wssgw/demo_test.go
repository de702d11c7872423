package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoResendCommand: the command line the demo prints, split by a real
// shell, runs wssgw sign with arguments that exist, and every run makes a
// message the gateway's policy accepts and that is new (no replay).
func TestDemoResendCommand(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to split the printed command line")
	}
	configFile := filepath.Join("..", "..", "config.example.yaml")
	cfg, err := loadConfig(configFile, nil)
	require.NoError(t, err)
	route := firstSecuredRoute(cfg)
	require.NotNil(t, route)
	d := newDemoPartner(cfg, configFile, route)
	const url = "http://127.0.0.1:8080/orders"
	line := d.resendCommand("bin/wssgw", url)

	sign, curl, ok := strings.Cut(line, "\\\n")
	require.True(t, ok, "a sign command, then curl on the next line: %s", line)
	assert.Contains(t, curl, "| curl ")
	assert.Contains(t, curl, "--data-binary @- "+url)
	words := shellWords(t, sh, sign)
	require.Equal(t, "bin/wssgw", words[0])
	assert.Equal(t, d.signArgs(), words[1:], "the shell reads back the arguments")
	assert.Contains(t, curl, `-H 'SOAPAction: "urn:wssgw:demo:orders/PlaceOrder"'`)

	var sent [][]byte
	for range 2 {
		msg, stderr, err := runCLI(t, nil, words[1:]...)
		require.NoError(t, err, stderr)
		_, stderr, err = runCLI(t, []byte(msg), "verify", "--config", configFile, "--policy", route.Policy, "-")
		require.NoError(t, err, stderr)
		sent = append(sent, []byte(msg))
	}
	assert.False(t, bytes.Equal(sent[0], sent[1]), "each run signs afresh")
}

// shellWords splits a command line as sh does.
func shellWords(t *testing.T, sh, line string) []string {
	t.Helper()
	out, err := exec.Command(sh, "-c", "printf '%s\\0' "+line).Output()
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

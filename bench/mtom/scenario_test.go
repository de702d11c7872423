package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/bench/proc"
)

const testKeys = "../../examples/keys"

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// wssgwBinary builds the real gateway once for the scenario tests (without
// the race detector: the gateway is measured, not tested, here).
func wssgwBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs wssgw")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bench-mtom-test-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "wssgw")
		out, err := exec.Command("go", "build", "-o", binary, "github.com/wssgw/wssgw/cmd/wssgw").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building wssgw: %w: %s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binary
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary != "" {
		_ = os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}

// TestScenarios runs both scenarios end to end at small sizes: every
// response is checked, and the signatures verified by wssgw verify.
func TestScenarios(t *testing.T) {
	bin := wssgwBinary(t)
	base := options{wssgw: bin, keys: testKeys, size: 1 << 20, sizes: []int64{64 << 10, 1 << 20}, reps: 1, seed: 1, attachments: attachXOP}
	tests := []struct {
		name string
		edit func(*options)
	}{
		{name: "ok/all-xop", edit: func(o *options) { o.scenario = scenarioAll }},
		{name: "ok/responses-swa-content", edit: func(o *options) { o.scenario, o.attachments = scenarioResponses, "swa-content" }},
		{name: "ok/responses-swa-complete", edit: func(o *options) { o.scenario, o.attachments = scenarioResponses, "swa-complete" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.edit(&o)
			require.NoError(t, run(o))
		})
	}
}

// TestCheckSignaturesRejectsUnsigned: the signature check fails when a
// gateway that should sign passes responses through untouched.
func TestCheckSignaturesRejectsUnsigned(t *testing.T) {
	bin := wssgwBinary(t)
	be, err := startResponder(newSource(1))
	require.NoError(t, err)
	t.Cleanup(func() { be.Close() })
	c := &http.Client{}
	for _, tc := range []struct{ name, kind string }{
		{"fail/streaming", kindMTOM},
		{"fail/" + modeStreamingStrict, kindMTOM},
		{"fail/buffered", kindInline},
		{"fail/" + modeBufferedPackage, kindMTOM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The mode says it signs; its gateway does not.
			m := mode{name: tc.name[len("fail/"):], kind: tc.kind}
			g, err := startGateway(bin, be.url, m, false)
			require.NoError(t, err)
			t.Cleanup(g.Stop)
			err = checkSignatures(options{wssgw: bin, keys: testKeys}, c, []*proc.Wssgw{g}, []mode{m})
			assert.ErrorContains(t, err, m.name+" signature check")
		})
	}
}

func TestRunRejectsFlags(t *testing.T) {
	base := options{reps: 1, attachments: attachXOP, scenario: scenarioResponses}
	for name, edit := range map[string]func(*options){
		"fail/scenario":    func(o *options) { o.scenario = "download" },
		"fail/reps":        func(o *options) { o.reps = 0 },
		"fail/attachments": func(o *options) { o.attachments = "swa" },
	} {
		t.Run(name, func(t *testing.T) {
			o := base
			edit(&o)
			assert.Error(t, run(o))
		})
	}
}

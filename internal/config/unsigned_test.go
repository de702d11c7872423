package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateUnsigned(t *testing.T) {
	dir := t.TempDir()
	cert, _ := writeKeyPair(t, dir)
	const k = "policies.p"
	tests := map[string]struct {
		mode  string
		allow []string
		want  []string
	}{
		"ok/strip":   {mode: UnsignedStrip},
		"ok/reject":  {mode: UnsignedReject},
		"ok/forward": {mode: UnsignedForward, allow: []string{"{http://www.w3.org/2005/08/addressing}To"}},
		"fail/mode":  {mode: "drop", want: []string{k + ".unsignedHeaders"}},
		"fail/case":  {mode: "Strip", want: []string{k + ".unsignedHeaders"}},
		"fail/allow": {mode: UnsignedStrip, allow: []string{"{urn:x}ok", "wsa:To", "{}local", "{urn:x}"},
			want: []string{k + ".unsignedAllow[1]", k + ".unsignedAllow[2]", k + ".unsignedAllow[3]"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := valid()
			p := DefaultPolicy()
			p.Trust.CAFiles = []string{cert}
			p.UnsignedHeaders, p.UnsignedAllow = tc.mode, tc.allow
			c.Policies = map[string]Policy{"p": p}
			c.Routes[0].Policy = "p"
			assert.ElementsMatch(t, tc.want, problemKeys(t, c))
		})
	}
}

// TestValidateUnsignedNamesValue: the problem names the key path and the
// value, so an operator finds the typo.
func TestValidateUnsignedNamesValue(t *testing.T) {
	c := valid()
	p := DefaultPolicy()
	p.Require = []string{}
	p.UnsignedHeaders, p.UnsignedAllow = "drop", []string{"wsa:To"}
	c.Policies = map[string]Policy{"p": p}
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `policies.p.unsignedHeaders: must be one of strip, reject, forward, got "drop"`)
	assert.Contains(t, err.Error(), `policies.p.unsignedAllow[0]: must be a QName {namespace}local, got "wsa:To"`)
}

func TestApplyDefaultsUnsigned(t *testing.T) {
	c := valid()
	c.Policies = map[string]Policy{"p": {}, "q": {UnsignedHeaders: UnsignedForward}}
	c.ApplyDefaults()
	assert.Equal(t, UnsignedStrip, c.Policies["p"].UnsignedHeaders, "strip is the default")
	assert.Equal(t, UnsignedForward, c.Policies["q"].UnsignedHeaders, "a set value is kept")
}

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/signer"
)

// confirmedResponse signs cliEnvelope as the gateway signs a response,
// with the partner key (trusted by the test CA), confirming values (none:
// one SignatureConfirmation without Value).
func confirmedResponse(t *testing.T, p *cliPKI, confirm bool, values ...[]byte) []byte {
	t.Helper()
	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{CertFile: p.partnerCrt, KeyFile: p.partnerKey})
	require.NoError(t, err)
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = kp.Signer, kp.Certificate
	o.SignatureConfirmation, o.Confirm = confirm, values
	out, err := signer.Secure([]byte(cliEnvelope), o)
	require.NoError(t, err)
	return out
}

// TestVerifyExpectConfirmation: --expect-confirmation accepts a response
// whose signed SignatureConfirmations are exactly the expected values, and
// rejects a wrong, missing, extra or unsigned one.
func TestVerifyExpectConfirmation(t *testing.T) {
	p := newCLIPKI(t)
	v1, v2 := bytes.Repeat([]byte{7}, 64), []byte("another request signature")
	b1, b2 := base64.StdEncoding.EncodeToString(v1), base64.StdEncoding.EncodeToString(v2)
	one, two := confirmedResponse(t, p, true, v1), confirmedResponse(t, p, true, v1, v2)
	// An unsigned confirmation of v2 slipped into the header by someone on
	// the path.
	injected := bytes.Replace(one, []byte(`<wsu:Timestamp`), []byte(`<wsse11:SignatureConfirmation `+
		`xmlns:wsse11="http://docs.oasis-open.org/wss/oasis-wss-wssecurity-secext-1.1.xsd" Value="`+b2+`"/><wsu:Timestamp`), 1)
	require.NotEqual(t, one, injected)
	wrapped := b1[:40] + "\n" + b1[40:]
	tests := []struct {
		name   string
		msg    []byte
		expect []string
		want   string // in stderr when rejected
	}{
		{name: "ok/one value", msg: one, expect: []string{b1}},
		{name: "ok/line-wrapped expected value", msg: one, expect: []string{wrapped}},
		{name: "ok/two values in any order", msg: two, expect: []string{b2, b1}},
		{name: "ok/unsigned request", msg: confirmedResponse(t, p, true), expect: []string{""}},
		{name: "fail/wrong value", msg: one, expect: []string{b2}, want: "not expected"},
		{name: "fail/one missing", msg: one, expect: []string{b1, b2}, want: "missing"},
		{name: "fail/one extra", msg: two, expect: []string{b1}, want: "not expected"},
		{name: "fail/value for an unsigned request", msg: confirmedResponse(t, p, true), expect: []string{b1}, want: "not expected"},
		{name: "fail/unsigned confirmation", msg: injected, expect: []string{b2, b1}, want: "not covered by a trusted signature"},
		{name: "fail/no confirmation", msg: confirmedResponse(t, p, false), expect: []string{b1}, want: "no SignatureConfirmation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"verify", "-c", p.config, "--policy", "signed"}
			for _, e := range tc.expect {
				args = append(args, "--expect-confirmation", e)
			}
			out, stderr, err := runCLI(t, nil, append(args, p.write(t, "response.xml", tc.msg))...)
			if tc.want != "" {
				require.Error(t, err)
				assert.Contains(t, stderr, "rejected: policy:")
				assert.Contains(t, stderr, tc.want)
				return
			}
			require.NoError(t, err, stderr)
			assert.Contains(t, out, "confirmation 1")
		})
	}

	t.Run("ok/reported without the flag", func(t *testing.T) {
		out, stderr, err := runCLI(t, nil, "verify", "-c", p.config, "--policy", "signed", "--json", p.write(t, "r.xml", injected))
		require.NoError(t, err, stderr)
		var rep verifyReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		assert.Equal(t, []confirmationFacts{{Value: b2, Signed: false}, {Value: b1, Signed: true}}, rep.Confirmations)
	})

	t.Run("fail/expected value not base64", func(t *testing.T) {
		_, _, err := runCLI(t, nil, "verify", "-c", p.config, "--policy", "signed", "--expect-confirmation", "*", p.write(t, "r.xml", one))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not base64")
	})
}

package template

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// A learned message on which the fast Body pass and exclusive C14N
// disagree is a bug in the fast pass: the template must keep it off,
// count a shadow disagreement (WssgwTemplateShadowDisagreement) and say
// so in the log, not switch it off in silence.
func TestFastBodySelfCheckDisagreement(t *testing.T) {
	for _, c := range []struct {
		name     string
		disagree bool
	}{
		{"ok/agree", false},
		{"fail/disagree", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.disagree {
				fastDigestEqual = func(a, b []byte) bool { return false }
				t.Cleanup(func() { fastDigestEqual = bytes.Equal })
			}
			f := newFixture(t, nil, testOptions())
			m := metrics.New(metrics.BuildInfo{})
			f.store.metrics = m.Templates("test")
			var logs bytes.Buffer
			eng, err := New(f.dom, xmlscan.DefaultConfig(), f.store, slog.New(slog.NewTextHandler(&logs, nil)))
			require.NoError(t, err)
			msg := f.sign(t, payloadEnvelope(items(3, false)), f.rsa, signer.RefBST, f.now, nil)
			_, err = eng.Process(msg, f.policy, f.now)
			require.NoError(t, err)
			require.Equal(t, 1, f.store.Len())
			gb := f.store.Templates()[0].gbody
			require.NotNil(t, gb, "a generic Body")
			series := fmt.Sprintf(`wssgw_template_shadow_checks_total{policy="test",result=%q} `, metrics.ShadowDisagree)
			text := metricText(t, m, metrics.NameShadowChecks)
			if !c.disagree {
				assert.NotNil(t, gb.fast, "fast pass on")
				assert.Contains(t, text, series+"0")
				assert.NotContains(t, logs.String(), "disagree")
				return
			}
			assert.Nil(t, gb.fast, "fast pass off")
			assert.Contains(t, text, series+"1")
			assert.Contains(t, logs.String(), "fast Body pass and exclusive C14N disagree")
			assert.Contains(t, logs.String(), "level=ERROR")
		})
	}
}

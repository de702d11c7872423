package template

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

func TestExportImport(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	first := f.sign(t, envelope(false, 2, "a"), f.rsa, signer.RefBST, f.now.Add(-time.Hour), nil)
	_, err := f.engine.Process(first, f.policy, f.now.Add(-time.Hour))
	require.NoError(t, err)
	exp, err := f.store.Export()
	require.NoError(t, err)
	require.Len(t, exp, 1)
	assert.Equal(t, first, exp[0].Message, "the exemplar is the learned message")
	var file bytes.Buffer
	require.NoError(t, json.NewEncoder(&file).Encode(exp))

	t.Run("ok/warm-start", func(t *testing.T) {
		fresh := NewStore(f.policy, testOptions(), nil)
		e, err := New(f.dom, xmlscan.DefaultConfig(), fresh, nil)
		require.NoError(t, err)
		entries, err := ReadExport(bytes.NewReader(file.Bytes()))
		require.NoError(t, err)
		n, err := e.Import(entries)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		msg := f.sign(t, envelope(false, 2, "b"), f.rsa, signer.RefBST, f.now, nil)
		res, err := e.Process(msg, f.policy, f.now)
		require.NoError(t, err)
		assert.Equal(t, metrics.LookupHit, res.Lookup, "the first message after the import is a hit")
	})
	t.Run("fail/forged-entry-is-not-learned", func(t *testing.T) {
		fresh := NewStore(f.policy, testOptions(), nil)
		e, err := New(f.dom, xmlscan.DefaultConfig(), fresh, nil)
		require.NoError(t, err)
		forged := bytes.Replace(first, []byte(">a 0<"), []byte(">z 0<"), 1)
		require.NotEqual(t, first, forged)
		n, err := e.Import([]Exported{{Policy: f.policy.Name, ID: "x", Message: forged}})
		assert.Error(t, err)
		assert.Zero(t, n)
		assert.Zero(t, fresh.Len())
	})
}

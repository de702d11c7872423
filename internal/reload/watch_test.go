package reload

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWatch: a change of content, a file that goes away or comes back,
// and a Kubernetes-style "..data" symlink swap are each seen once; an
// unchanged set is not.
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	// The layout of a mounted ConfigMap: config.yaml -> ..data/config.yaml,
	// ..data -> a timestamped directory swapped by one rename.
	write := func(gen, content string) {
		d := filepath.Join(dir, gen)
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "config.yaml"), []byte(content), 0o600))
		tmp := filepath.Join(dir, "..data_tmp")
		require.NoError(t, os.Symlink(gen, tmp))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, "..data")))
	}
	write("gen1", "one")
	file := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.Symlink(filepath.Join("..data", "config.yaml"), file))
	other := filepath.Join(dir, "other")
	files := []string{file}
	w := NewWatch(func() []string { return files }, 0)

	steps := []struct {
		name    string
		do      func()
		changed bool
	}{
		{"ok/unchanged", func() {}, false},
		{"ok/symlink-swap", func() { write("gen2", "two") }, true},
		{"ok/seen-once", func() {}, false},
		{"ok/missing-file-named", func() { files = []string{file, other} }, true},
		{"ok/still-missing", func() {}, false},
		{"ok/file-appears", func() { require.NoError(t, os.WriteFile(other, []byte("x"), 0o600)) }, true},
		{"ok/file-goes", func() { require.NoError(t, os.Remove(other)) }, true},
	}
	for _, s := range steps {
		s.do()
		assert.Equal(t, s.changed, w.poll(), s.name)
	}
}

package crypto

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sentinels are the package's exported errors by name. The test below
// parses the package source, so an exported Err* missing here, or missing
// a label in Reason, fails it.
var sentinels = map[string]error{
	"ErrKeyTooWeak":           ErrKeyTooWeak,
	"ErrUnsupportedKey":       ErrUnsupportedKey,
	"ErrKeyMismatch":          ErrKeyMismatch,
	"ErrEncryptedKey":         ErrEncryptedKey,
	"ErrBadPassword":          ErrBadPassword,
	"ErrLoad":                 ErrLoad,
	"ErrUnsupportedAlgorithm": ErrUnsupportedAlgorithm,
	"ErrAlgorithmNotAllowed":  ErrAlgorithmNotAllowed,
	"ErrAlgorithmKey":         ErrAlgorithmKey,
	"ErrSignature":            ErrSignature,
	"ErrDecrypt":              ErrDecrypt,
	"ErrEncrypt":              ErrEncrypt,
}

// exportedErrors lists the exported package-level variables named Err* in
// the package's non-test source files.
func exportedErrors(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := os.ReadDir(".")
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".go") || strings.HasSuffix(f.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f.Name(), nil, 0)
		require.NoError(t, err)
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// TestReasonCoversEveryError: every exported error of the package maps to
// its own metric label, directly and wrapped the way the package wraps
// them, and allReasons lists it.
func TestReasonCoversEveryError(t *testing.T) {
	names := exportedErrors(t)
	var known []string
	for n := range sentinels {
		known = append(known, n)
	}
	sort.Strings(known)
	require.Equal(t, names, known, "exported errors of the package vs the sentinels table of this test")

	all := map[string]bool{}
	for _, r := range allReasons() {
		all[r] = true
	}
	labels := map[string]string{}
	for _, name := range names {
		t.Run("ok/"+name, func(t *testing.T) {
			err := sentinels[name]
			label := Reason(err)
			assert.NotEqual(t, ReasonOther, label, "%s has no label", name)
			assert.NotEqual(t, ReasonNone, label)
			assert.True(t, all[label], "allReasons() lacks %q", label)
			assert.Equal(t, label, Reason(fmt.Errorf("crypto: some detail: %w", err)), "wrapped")
			if prev, ok := labels[label]; ok {
				t.Errorf("%s and %s share the label %q", prev, name, label)
			}
			labels[label] = name
		})
	}
	t.Run("ok/nil", func(t *testing.T) { assert.Equal(t, ReasonNone, Reason(nil)) })
	t.Run("fail/foreign-error", func(t *testing.T) { assert.Equal(t, ReasonOther, Reason(os.ErrNotExist)) })
	assert.Len(t, allReasons(), len(names)+2, "none, one label per error, other")
}

// allReasons lists every label Reason can return.
func allReasons() []string {
	out := []string{ReasonNone}
	for _, r := range reasons {
		out = append(out, r.label)
	}
	return append(out, ReasonOther)
}

func TestReasons(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range allReasons() {
		assert.Regexp(t, `^[a-z_]+$`, r)
		assert.False(t, seen[r], r)
		seen[r] = true
	}
	assert.Equal(t, ReasonNone, Reason(nil))
	assert.Equal(t, ReasonOther, Reason(assert.AnError))
	assert.Equal(t, ReasonKeyMismatch, Reason(ErrKeyMismatch))
}

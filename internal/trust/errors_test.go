package trust

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

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
)

// sentinels are the package's exported errors by name. The test below
// parses the package source, so an exported Err* missing here, or missing
// a label in Reason, fails it.
var sentinels = map[string]error{
	"ErrUntrusted":   ErrUntrusted,
	"ErrExpired":     ErrExpired,
	"ErrNotYetValid": ErrNotYetValid,
	"ErrRevoked":     ErrRevoked,
	"ErrKeyUsage":    ErrKeyUsage,
	"ErrSubject":     ErrSubject,
	"ErrCRL":         ErrCRL,
	"ErrOCSP":        ErrOCSP,
	"ErrNotFound":    ErrNotFound,
	"ErrBadDN":       ErrBadDN,
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
// them, and no label is one of internal/crypto's.
func TestReasonCoversEveryError(t *testing.T) {
	names := exportedErrors(t)
	var known []string
	for n := range sentinels {
		known = append(known, n)
	}
	sort.Strings(known)
	require.Equal(t, names, known, "exported errors of the package vs the sentinels table of this test")

	labels := map[string]string{}
	for _, name := range names {
		t.Run("ok/"+name, func(t *testing.T) {
			err := sentinels[name]
			label := Reason(err)
			assert.NotEqual(t, wcrypto.ReasonOther, label, "%s has no label", name)
			assert.NotEqual(t, wcrypto.ReasonNone, label)
			assert.Equal(t, wcrypto.ReasonOther, wcrypto.Reason(err), "%s is not one of crypto's errors", name)
			assert.Equal(t, label, Reason(fmt.Errorf("crypto: some detail: %w", err)), "wrapped")
			if prev, ok := labels[label]; ok {
				t.Errorf("%s and %s share the label %q", prev, name, label)
			}
			labels[label] = name
		})
	}
	assert.Len(t, reasons, len(names), "one label per error")
}

// TestReasonDelegatesToCrypto: Reason labels the key material's errors a
// trust store passes on exactly as crypto.Reason does, and no label of
// this package is also one of crypto's, so the union stays a closed set of
// distinct labels.
func TestReasonDelegatesToCrypto(t *testing.T) {
	assert.Equal(t, wcrypto.ReasonNone, Reason(nil))
	assert.Equal(t, wcrypto.ReasonOther, Reason(assert.AnError))
	for _, err := range []error{wcrypto.ErrLoad, wcrypto.ErrKeyTooWeak, wcrypto.ErrUnsupportedKey, wcrypto.ErrKeyMismatch, wcrypto.ErrDecrypt} {
		assert.Equal(t, wcrypto.Reason(err), Reason(fmt.Errorf("crypto: detail: %w", err)), "%v", err)
	}
	cryptoLabels := map[string]bool{wcrypto.ReasonNone: true, wcrypto.ReasonOther: true}
	for _, err := range []error{wcrypto.ErrKeyTooWeak, wcrypto.ErrUnsupportedKey, wcrypto.ErrKeyMismatch, wcrypto.ErrEncryptedKey,
		wcrypto.ErrBadPassword, wcrypto.ErrLoad, wcrypto.ErrUnsupportedAlgorithm, wcrypto.ErrAlgorithmNotAllowed,
		wcrypto.ErrAlgorithmKey, wcrypto.ErrSignature, wcrypto.ErrDecrypt, wcrypto.ErrEncrypt} {
		cryptoLabels[wcrypto.Reason(err)] = true
	}
	for _, r := range reasons {
		assert.Regexp(t, `^[a-z_]+$`, r.label)
		assert.False(t, cryptoLabels[r.label], "%q is also a crypto label", r.label)
	}
}

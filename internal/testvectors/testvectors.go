// Package testvectors locates the interop test vectors for the tests of
// every package, so that the rule for finding them, and for what happens
// when they are absent, is written once.
//
// A vector set ("wss4j", "xmlsec") is looked up first in the repository's
// own testdata/<set> (the WSS4J vectors are committed there, see
// testdata/wss4j/README.md), then in shared/vectors/<set> beside the
// repository (the xmlsec W3C sets, too large to commit). A set found in
// neither place skips the test with one line, or fails it when CI=true, so
// that the interop checks cannot silently stop running in CI.
package testvectors

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SkipMessage is the one line a test skips with when a vector set is absent.
const SkipMessage = "shared vectors absent (../shared/vectors); set CI=true to require them"

// ErrAbsent reports a vector set found neither in testdata nor in ../shared.
var ErrAbsent = errors.New("vector set absent")

// Path returns the file or directory rel ("wss4j/keys/ca.crt", "xmlsec")
// of a vector set, whose name is rel's first element. An absent set skips
// the test (fails it under CI=true); a set that is present but lacks rel
// fails the test, since that is a broken checkout or a wrong name.
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	p, err := Find(rel)
	if errors.Is(err, ErrAbsent) {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%v (CI=true requires them)", err)
		}
		tb.Skip(SkipMessage)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Read returns the content of the vector file rel, as Path finds it.
func Read(tb testing.TB, rel string) []byte {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Find is Path without a test: for callers that must go on when the set is
// absent (a fuzz target seeding its corpus). The error wraps ErrAbsent when
// the set is nowhere, or the os error when the set lacks rel.
func Find(rel string) (string, error) {
	rel = filepath.FromSlash(rel)
	set, _, _ := strings.Cut(rel, string(filepath.Separator))
	dir, err := setDir(set)
	if err != nil {
		return "", err
	}
	p := filepath.Join(filepath.Dir(dir), rel)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("vector %s: %w", rel, err)
	}
	return p, nil
}

// setDir returns the directory of the named set: testdata/<set> in the
// repository, else shared/vectors/<set> beside it.
func setDir(set string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	candidates := []string{
		filepath.Join(root, "testdata", set),
		filepath.Join(root, "..", "shared", "vectors", set),
	}
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: %s (looked in %s)", ErrAbsent, set, strings.Join(candidates, ", "))
}

// RepoRoot returns the module root: the nearest directory at or above the
// working directory (a test's package directory) holding go.mod. Vector
// sets and the interop peers (internal/testpeer) are found from it.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("testvectors: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testvectors: no go.mod above the working directory")
		}
		dir = parent
	}
}

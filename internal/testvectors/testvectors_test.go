package testvectors

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layout makes a repository (go.mod, a package directory) with the given
// files, relative to the directory above it (so "shared/vectors/..." lies
// beside the repository), and moves into the package directory as go test
// would.
func layout(t *testing.T, files ...string) string {
	t.Helper()
	top := t.TempDir()
	for _, f := range append([]string{"repo/go.mod", "repo/internal/pkg/x.go"}, files...) {
		p := filepath.Join(top, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join(top, "repo", "internal", "pkg"))
	return top
}

func TestFind(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		rel   string
		want  string // relative to the layout's top; "" when an error is expected
		err   error
	}{
		{name: "ok/testdata", files: []string{"repo/testdata/wss4j/keys/ca.crt"}, rel: "wss4j/keys/ca.crt", want: "repo/testdata/wss4j/keys/ca.crt"},
		{name: "ok/shared-beside-the-repo", files: []string{"shared/vectors/xmlsec/MANIFEST.tsv"}, rel: "xmlsec/MANIFEST.tsv", want: "shared/vectors/xmlsec/MANIFEST.tsv"},
		{name: "ok/set-directory", files: []string{"shared/vectors/xmlsec/a.xml"}, rel: "xmlsec", want: "shared/vectors/xmlsec"},
		{name: "ok/testdata-before-shared", files: []string{"repo/testdata/wss4j/a.xml", "shared/vectors/wss4j/a.xml"}, rel: "wss4j/a.xml", want: "repo/testdata/wss4j/a.xml"},
		// The set is chosen as a whole: a file missing from the committed
		// set is not looked for in ../shared.
		{name: "fail/missing-from-present-set", files: []string{"repo/testdata/wss4j/a.xml", "shared/vectors/wss4j/b.xml"}, rel: "wss4j/b.xml", err: fs.ErrNotExist},
		{name: "fail/absent-set", rel: "xmlsec/MANIFEST.tsv", err: ErrAbsent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top := layout(t, tc.files...)
			got, err := Find(tc.rel)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Find(%q) error %v, want %v", tc.rel, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(top, filepath.FromSlash(tc.want))
			if gi, _ := os.Stat(got); gi == nil || !os.SameFile(gi, mustStat(t, want)) {
				t.Fatalf("Find(%q) = %s, want %s", tc.rel, got, want)
			}
		})
	}
}

func mustStat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// recorder is a testing.TB that records how Path ended the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

type stop struct{}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped = args[0].(string)
	panic(stop{})
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	panic(stop{})
}

func (r *recorder) path(rel string) (p string) {
	defer func() {
		if v := recover(); v != nil && v != (stop{}) {
			panic(v)
		}
	}()
	return Path(r, rel)
}

// TestPathAbsent checks the policy for an absent set: one line to skip
// with locally, a failure under CI=true; and a failure, never a skip, for
// a file missing from a present set.
func TestPathAbsent(t *testing.T) {
	tests := []struct {
		name, ci, rel        string
		wantSkip, wantFailed bool
	}{
		{name: "ok/absent-set-skips", rel: "xmlsec/MANIFEST.tsv", wantSkip: true},
		{name: "fail/absent-set-under-ci", ci: "true", rel: "xmlsec/MANIFEST.tsv", wantFailed: true},
		{name: "fail/missing-file", rel: "wss4j/nope.xml", wantFailed: true},
		{name: "ok/present", ci: "true", rel: "wss4j/a.xml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			layout(t, "repo/testdata/wss4j/a.xml")
			t.Setenv("CI", tc.ci)
			r := &recorder{}
			p := r.path(tc.rel)
			if (r.skipped != "") != tc.wantSkip || (r.failed != "") != tc.wantFailed {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", r.skipped, r.failed, tc.wantSkip, tc.wantFailed)
			}
			if tc.wantSkip && r.skipped != SkipMessage {
				t.Fatalf("skip line %q", r.skipped)
			}
			if !tc.wantSkip && !tc.wantFailed && p == "" {
				t.Fatal("no path")
			}
		})
	}
}

// TestCommitted checks that the repository carries the WSS4J vectors the
// tests of other packages read, so that they never skip.
func TestCommitted(t *testing.T) {
	t.Setenv("CI", "true")
	for _, rel := range []string{
		"wss4j/keys/ca.crt", "wss4j/keys/client.crt", "wss4j/keys/client.key", "wss4j/keys/server.crt", "wss4j/keys/server.key",
		"wss4j/sign-bst/0000.xml", "wss4j/sign-bst-soap12/0000.xml", "wss4j/sign-issuerserial/0000.xml", "wss4j/signencr-gcm/0000.xml",
		"wss4j/sign-x509/0000.xml", "wss4j/mtom-store-sign/0000.mime", "wss4j/mtom-store-sign/0000.ctype",
		"wss4j/mtom-store-sign-soap12/0000.mime", "wss4j/mtom-store-signencr/0000.mime", "wss4j/mtom-store-signencr-soap12/0000.mime",
	} {
		p := Path(t, rel)
		if !strings.Contains(filepath.ToSlash(p), "/testdata/wss4j/") {
			t.Errorf("%s: %s is not the repository's testdata", rel, p)
		}
	}
}

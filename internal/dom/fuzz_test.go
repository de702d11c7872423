package dom

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/wss"
)

// FuzzProcess feeds mutated WS-Security messages to the engine. Oracles: no
// panic; every failure is a *wss.Error with a reason from the closed set;
// an accepted message meets the policy by node identity (the forwarded Body
// is a Body a verified signature covered) and its forwarded bytes contain no
// Security header.
func FuzzProcess(f *testing.F) {
	now, p := fuzzSeeds(f)
	e := newEngine(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		res, err := e.Process(msg, p, now)
		if err != nil {
			if reasonOf(err) == 0 {
				t.Fatalf("error outside the closed set: %v", err)
			}
			return
		}
		if err := p.Check(context.Background(), res, now); err != nil {
			return
		}
		if !res.Covered(res.Body) {
			t.Fatal("accepted a message whose Body no verified signature covers")
		}
		if res.Security[0] < 0 || res.Security[1] > len(res.Document) {
			t.Fatal("accepted without a Security header span")
		}
	})
}

// fuzzSeeds adds the WSS4J vectors to the corpus and returns a clock inside
// their validity and the vector policy. Without the vectors (a checkout
// that lacks testdata) it seeds a bare envelope under the default policy,
// so that the target never reads key files that are not there.
func fuzzSeeds(f *testing.F) (time.Time, *wss.Policy) {
	f.Helper()
	if errVectors != nil {
		f.Add([]byte(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>`))
		p, err := wss.Compile("fuzz", config.DefaultPolicy(), nil, reload.Options{})
		if err != nil {
			f.Fatal(err)
		}
		return time.Now(), p
	}
	files, err := filepath.Glob(filepath.Join(vectorDir, "*", "*.xml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no vectors in %s: %v", vectorDir, err)
	}
	var now time.Time
	for _, file := range files {
		msg, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(msg)
		now = createdOf(f, msg).Add(time.Second)
	}
	return now, vectorPolicy(f, nil)
}

package dom

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzProcess feeds mutated WS-Security messages to the engine. Oracles: no
// panic; every failure is a *wss.Error with a reason from the closed set;
// an accepted message meets the policy by node identity (the forwarded Body
// is a Body a verified signature covered) and its forwarded bytes contain no
// Security header.
func FuzzProcess(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(vectorDir, "*", "*.xml"))
	var now time.Time
	for _, file := range files {
		msg, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(msg)
		now = createdOf(f, msg).Add(time.Second)
	}
	if len(files) == 0 {
		f.Add([]byte(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>`))
		now = time.Now()
	}
	e := newEngine(f)
	p := vectorPolicy(f, nil)
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

package xmlscan_test

import (
	"path/filepath"
	"testing"
	"time"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testtraffic"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// BenchmarkScanFresh is the strict gate alone on the messages an attacker
// forces onto the DOM engine (issue 14: the gate is about 40 % of what a
// fresh-shape message adds over a template hit): testtraffic's mix and
// its Fresh shapes, scanned with the request gate's configuration
// (DefaultConfig) into a reused Document, as the gateway's pool does.
// Run under callgrind for instruction counts, collected in the timed
// loop only (BenchmarkScanFresh.func2 with go1.26; toggling on
// xmlscan.* also counts the scans testtraffic's signer makes while the
// pools are built):
//
//	go test -c -o scan.test ./internal/xmlscan
//	cd internal/xmlscan && GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind \
//	  --toggle-collect='github.com/wssgw/wssgw/internal/xmlscan_test.BenchmarkScanFresh.func2' \
//	  ../../scan.test -test.run '^$' -test.bench 'ScanFresh/fresh' -test.benchtime 2000x
func BenchmarkScanFresh(b *testing.B) {
	keys := filepath.Join("..", "..", "examples", "keys")
	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{
		CertFile: filepath.Join(keys, "partner.crt"), KeyFile: filepath.Join(keys, "partner.key")})
	if err != nil {
		b.Fatal(err)
	}
	s, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	g := testtraffic.New(7, kp, func() time.Time { return now })
	const pool = 200
	for _, c := range []struct {
		name string
		draw func() (testtraffic.Message, error)
	}{{"mix", g.Next}, {"fresh", g.Fresh}} {
		msgs := make([][]byte, pool)
		size := 0
		for i := range msgs {
			m, err := c.draw()
			if err != nil {
				b.Fatal(err)
			}
			msgs[i] = m.Signed
			size += len(m.Signed)
		}
		b.Run(c.name, func(b *testing.B) {
			var d xmlscan.Document
			b.ReportAllocs()
			b.SetBytes(int64(size / pool))
			i := 0
			for b.Loop() {
				if err := s.Scan(msgs[i%pool], &d); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(size)/pool, "msg-bytes")
		})
	}
}

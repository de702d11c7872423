package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/config"
)

// uploadGoalMiB is the peak RSS wssgw may reach on the upload (DESIGN.md
// §6).
const uploadGoalMiB = 64

const mtomPath = "/upload"

// runUpload sends one signed MTOM request whose attachment has o.size
// bytes through a secured route and prints the gateway's peak RSS.
func runUpload(o options) error {
	size := int64(o.size)
	if size <= 0 {
		return fmt.Errorf("-size must be positive")
	}
	caFile, err := filepath.Abs(filepath.Join(o.keys, "ca.crt"))
	if err != nil {
		return err
	}
	fmt.Printf("== upload: one signed MTOM request, %s attachment\n", o.size)
	be, err := startSink()
	if err != nil {
		return err
	}
	defer be.Close()
	gw, err := startUploadGateway(o.wssgw, be.url, caFile, size)
	if err != nil {
		return err
	}
	defer gw.Stop()
	// Signed once the gateway runs: its replay store refuses messages
	// created before it started (issue 16). Signing runs in this process,
	// so it does not add to the gateway's measured memory.
	fmt.Printf("signing a %s attachment (first pass) ...\n", o.size)
	start := time.Now()
	root, err := signedRoot(o.keys, size, o.seed)
	if err != nil {
		return err
	}
	fmt.Printf("signed in %s; root part %d bytes\n", time.Since(start).Round(time.Millisecond), len(root))
	start = time.Now()
	if err := upload(gw.Data+mtomPath, root, size, o.seed); err != nil {
		return err
	}
	elapsed := time.Since(start)
	return reportUpload(gw, be, size, elapsed)
}

func reportUpload(gw *proc.Wssgw, be *sink, size int64, elapsed time.Duration) error {
	hwm, err := gw.PeakRSS()
	if err != nil {
		return err
	}
	if got := be.received.Load(); got < size {
		return fmt.Errorf("the backend received %d bytes, less than the %d byte attachment", got, size)
	}
	mib := float64(hwm) / (1 << 20)
	fmt.Printf("upload %s in %s: %.1f MiB/s (backend got %d bytes)\n",
		config.ByteSize(size), elapsed.Round(time.Millisecond), float64(size)/(1<<20)/elapsed.Seconds(), be.received.Load())
	fmt.Printf("peak RSS %.1f MiB (goal <= %d MiB, ratio %.2f)\n", mib, uploadGoalMiB, mib/uploadGoalMiB)
	return nil
}

// sink is the upload's backend: it discards request bodies and counts
// their bytes.
type sink struct {
	*http.Server
	url      string
	received atomic.Int64
}

func startSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &sink{url: "http://" + ln.Addr().String()}
	b.Server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		b.received.Add(n)
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body/></soapenv:Envelope>`))
	})}
	go func() { _ = b.Serve(ln) }()
	return b, nil
}

// startUploadGateway runs bin with one secured route (signature and
// timestamp by the demo partner) whose body and MIME limits admit a
// size-byte attachment; the spool directory is the process's temporary
// directory.
func startUploadGateway(bin, backend, caFile string, size int64) (*proc.Wssgw, error) {
	total := config.ByteSize(size + 16<<20)
	return proc.Start(bin, "bench-mtom-", nil, func(dir string) string {
		return fmt.Sprintf(`listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
mime: {maxPartSize: %[4]d, maxTotalSize: %[5]d, spoolDir: %[6]q}
routes:
  - {name: upload, path: %[1]s, backend: %[2]q, policy: partner, maxBodyBytes: %[5]d}
policies:
  partner:
    require: [signature, timestamp]
    trust: {caFiles: [%[3]q]}
`, mtomPath, backend, caFile, size, int64(total), dir)
	})
}

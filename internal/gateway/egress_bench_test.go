package gateway

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
)

// BenchmarkEgressExchange is one call of the legacy client through an
// egress route, inside the gateway: its request secured (signed), the
// partner's signed response of about 4 KiB and 256 KiB (a canned
// transport, no network) read, verified and relayed as plaintext.
// alloc/response is the bytes allocated per byte of response: each copy
// of the response on the way adds about 1 (issue 14 review: the plaintext
// was copied twice more than needed, once into a new envelope and once
// into a string).
func BenchmarkEgressExchange(b *testing.B) {
	for _, size := range []int{4 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			dir := b.TempDir()
			ca := testpki.NewCA(b, "egress CA")
			caFile := ca.WriteCert(b, dir)
			gwLeaf, partner := ca.Issue(b, dir, "gw"), ca.IssueRSA(b, dir, "partner")
			cfg := egressConfig(b, "http://127.0.0.1:1", caFile, gwLeaf)
			p := cfg.Policies["partner"]
			p.Replay = "off" // one canned response, answered again and again
			cfg.Policies["partner"] = p
			gw, err := New(cfg, metrics.New(metrics.BuildInfo{}), slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(gw.Close)
			var items strings.Builder
			for items.Len() < size {
				fmt.Fprintf(&items, `<m:Item sku="S-%d"><m:Note>note %d</m:Note></m:Item>`, items.Len(), items.Len())
			}
			o := signer.DefaultOptions()
			o.Signer, o.Certificate = partner.Key, partner.Cert
			resp, err := signer.Secure([]byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:Done xmlns:m="urn:x">`+
				items.String()+`</m:Done></soapenv:Body></soapenv:Envelope>`), o)
			if err != nil {
				b.Fatal(err)
			}
			gw.routes[0].proxy.Transport = cannedTransport{body: resp}
			call := func() {
				req := httptest.NewRequest(http.MethodPost, "/out", strings.NewReader(
					`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><m:Get xmlns:m="urn:x"/></soap:Body></soap:Envelope>`))
				req.Header.Set("Content-Type", "text/xml; charset=utf-8")
				w := &countingResponseWriter{header: http.Header{}}
				gw.ServeHTTP(w, req)
				if w.status != http.StatusOK || w.n < int64(size) {
					b.Fatalf("status %d, %d bytes", w.status, w.n)
				}
			}
			call()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.SetBytes(int64(len(resp)))
			b.ReportAllocs()
			for b.Loop() {
				call()
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(resp)), "alloc/response")
		})
	}
}

// countingResponseWriter is a ResponseWriter that counts the body and
// keeps none of it (httptest.ResponseRecorder would add a copy of every
// response).
type countingResponseWriter struct {
	header http.Header
	status int
	n      int64
}

func (w *countingResponseWriter) Header() http.Header { return w.header }
func (w *countingResponseWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *countingResponseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingResponseWriter)(nil)

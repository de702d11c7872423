package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wssgw/wssgw/internal/testnet"
)

// recordingBackend is a real HTTP backend that keeps what it received and
// answers with a fixed body.
type recordingBackend struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	response []byte
	respType string
	hits     int
}

func newRecordingBackend(t *testing.T, response []byte, respType string) *recordingBackend {
	b := &recordingBackend{response: response, respType: respType}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		b.mu.Lock()
		b.bodies, b.headers = append(b.bodies, body), append(b.headers, r.Header.Clone())
		b.hits++
		b.mu.Unlock()
		w.Header().Set("Content-Type", b.respType)
		w.Header().Set("Connection", "X-Backend-Private")
		w.Header().Set("X-Backend-Private", "must not reach the client")
		_, _ = w.Write(b.response)
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *recordingBackend) last() ([]byte, http.Header) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bodies[len(b.bodies)-1], b.headers[len(b.headers)-1]
}

func (b *recordingBackend) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hits
}

// tinyEnvelope is the smallest request the gate forwards on a policy-none
// route (issue 13: every route gates).
const tinyEnvelope = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>`

// envelope makes a SOAP envelope of the given version with a body of about
// size bytes, with bytes that a careless proxy would alter (CRLF, non-ASCII,
// a character reference, trailing whitespace).
func envelope(ns string, size int) []byte {
	var b bytes.Buffer
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<s:Envelope xmlns:s=\"" + ns + "\">\r\n <s:Body><m:Echo xmlns:m=\"urn:e2e\">")
	filler := make([]byte, 48)
	for b.Len() < size {
		_, _ = rand.Read(filler)
		b.WriteString("<m:v a='&#x9;ü'>")
		for _, c := range filler {
			b.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789"[int(c)%36])
		}
		b.WriteString("</m:v>\r\n")
	}
	b.WriteString("</m:Echo></s:Body></s:Envelope>\n \t")
	return b.Bytes()
}

func TestForwardByteExact(t *testing.T) {
	// The backend always gets charset=utf-8, the charset of the gated bytes
	// (issue 13), and SOAP 1.2's action.
	cases := map[string]struct {
		ns, contentType, forwarded string
		size                       int
	}{
		"ok/soap11-small": {"http://schemas.xmlsoap.org/soap/envelope/", "text/xml; charset=utf-8", "text/xml; charset=utf-8", 1 << 10},
		"ok/soap12-small": {"http://www.w3.org/2003/05/soap-envelope", `application/soap+xml; charset=UTF-8; action="urn:e2e/Echo"`,
			`application/soap+xml; charset=utf-8; action="urn:e2e/Echo"`, 1 << 10},
		"ok/soap11-1MiB": {"http://schemas.xmlsoap.org/soap/envelope/", "text/xml", "text/xml; charset=utf-8", 1 << 20},
		"ok/soap12-1MiB": {"http://www.w3.org/2003/05/soap-envelope", "application/soap+xml", "application/soap+xml; charset=utf-8", 1 << 20},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			request, response := envelope(tc.ns, tc.size), envelope(tc.ns, tc.size/2)
			backend := newRecordingBackend(t, response, tc.contentType)
			gw := startGateway(t, routeConfig(backend.URL, ""))

			req, err := http.NewRequest(http.MethodPost, gw.data+"/orders/v1", bytes.NewReader(request))
			require.NoError(t, err)
			req.Header.Set("Content-Type", tc.contentType)
			req.Header.Set("SOAPAction", `"urn:e2e/Echo"`)
			req.Header.Set("X-Request-Id", "partner-req-42")
			req.Header.Set("Connection", "X-Hop")
			req.Header.Set("X-Hop", "hop-by-hop, must be removed")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			got := readAll(t, resp)

			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.True(t, bytes.Equal(response, got), "response body differs from what the backend sent")
			assert.Equal(t, tc.contentType, resp.Header.Get("Content-Type"))
			assert.Equal(t, "partner-req-42", resp.Header.Get("X-Request-Id"), "an incoming correlation id is kept")
			assert.Empty(t, resp.Header.Get("X-Backend-Private"), "hop-by-hop response header was forwarded")

			sent, hdr := backend.last()
			assert.True(t, bytes.Equal(request, sent), "backend received different bytes than the client sent")
			assert.Equal(t, tc.forwarded, hdr.Get("Content-Type"))
			assert.Equal(t, `"urn:e2e/Echo"`, hdr.Get("SOAPAction"))
			assert.Equal(t, "partner-req-42", hdr.Get("X-Request-Id"))
			assert.Equal(t, "127.0.0.1", hdr.Get("X-Forwarded-For"))
			assert.Equal(t, "http", hdr.Get("X-Forwarded-Proto"))
			assert.Empty(t, hdr.Get("X-Hop"), "hop-by-hop request header was forwarded")
		})
	}
}

// TestForwardStreamsChunkedRequest: a chunked request body (read whole and
// gated on a policy-none route) reaches the backend byte for byte.
func TestForwardStreamsChunkedRequest(t *testing.T) {
	ns := "http://schemas.xmlsoap.org/soap/envelope/"
	request := envelope(ns, 256<<10)
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, routeConfig(backend.URL, ""))

	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < len(request); i += 8 << 10 {
			_, _ = pw.Write(request[i:min(i+8<<10, len(request))])
		}
		pw.Close()
	}()
	resp := gw.post("/orders", "text/xml", pr)
	readAll(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sent, _ := backend.last()
	assert.True(t, bytes.Equal(request, sent))
}

// fault is a SOAP 1.1 or 1.2 fault as parsed from a response.
type fault struct {
	XMLName xml.Name
	Body    struct {
		Fault struct {
			Code11   string `xml:"faultcode"`
			String11 string `xml:"faultstring"`
			Code12   string `xml:"Code>Value"`
			Reason12 string `xml:"Reason>Text"`
			Detail11 string `xml:"detail>correlationId"`
			Detail12 string `xml:"Detail>correlationId"`
		} `xml:"Fault"`
	} `xml:"Body"`
}

func parseFault(t *testing.T, resp *http.Response) fault {
	t.Helper()
	var f fault
	require.NoError(t, xml.Unmarshal(readAll(t, resp), &f))
	return f
}

func TestFaults(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	downURL := "http://" + testnet.RefusedAddr(t) // every dial is refused
	ok := newRecordingBackend(t, []byte("<ok/>"), "text/xml")

	soap11, soap12 := "text/xml; charset=utf-8", "application/soap+xml; charset=utf-8"
	env11, env12 := envelope("http://schemas.xmlsoap.org/soap/envelope/", 0), envelope("http://www.w3.org/2003/05/soap-envelope", 0)
	cases := map[string]struct {
		backend     string
		extra       string
		method      string
		contentType string
		body        []byte
		status      int
		code        string
	}{
		"fail/405-soap11":    {ok.URL, "", http.MethodGet, soap11, nil, 405, "soap:Client"},
		"fail/405-soap12":    {ok.URL, "", http.MethodPut, soap12, []byte("<x/>"), 405, "env:Sender"},
		"fail/415-json":      {ok.URL, "", http.MethodPost, "application/json", []byte("{}"), 415, "soap:Client"},
		"fail/415-soap12ish": {ok.URL, "", http.MethodPost, "application/soap+xmlx", []byte("<x/>"), 415, "env:Sender"},
		"fail/413-soap11":    {ok.URL, "    maxBodyBytes: 1KiB", http.MethodPost, soap11, make([]byte, 2048), 413, "soap:Client"},
		"fail/413-soap12":    {ok.URL, "    maxBodyBytes: 1KiB", http.MethodPost, soap12, make([]byte, 2048), 413, "env:Sender"},
		"fail/502-soap11":    {downURL, "", http.MethodPost, soap11, env11, 502, "soap:Server"},
		"fail/502-soap12":    {downURL, "", http.MethodPost, soap12, env12, 502, "env:Receiver"},
		"fail/504-soap11":    {slow.URL, "    timeouts: {backend: 300ms}", http.MethodPost, soap11, env11, 504, "soap:Server"},
		"fail/504-soap12":    {slow.URL, "    timeouts: {backend: 300ms}", http.MethodPost, soap12, env12, 504, "env:Receiver"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gw := startGateway(t, routeConfig(tc.backend, tc.extra))
			hitsBefore := ok.count()
			req, err := http.NewRequest(tc.method, gw.data+"/orders", bytes.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", tc.contentType)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)

			assert.Equal(t, tc.status, resp.StatusCode)
			f := parseFault(t, resp)
			id := resp.Header.Get("X-Request-Id")
			require.Len(t, id, 32, "a correlation id is minted")
			if strings.HasPrefix(tc.code, "env:") {
				assert.Equal(t, "http://www.w3.org/2003/05/soap-envelope", f.XMLName.Space)
				assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "application/soap+xml"))
				assert.Equal(t, tc.code, f.Body.Fault.Code12)
				assert.NotEmpty(t, f.Body.Fault.Reason12)
				assert.Equal(t, id, f.Body.Fault.Detail12)
			} else {
				assert.Equal(t, "http://schemas.xmlsoap.org/soap/envelope/", f.XMLName.Space)
				assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/xml"))
				assert.Equal(t, tc.code, f.Body.Fault.Code11)
				assert.NotEmpty(t, f.Body.Fault.String11)
				assert.Equal(t, id, f.Body.Fault.Detail11)
			}
			if tc.backend == ok.URL {
				assert.Equal(t, hitsBefore, ok.count(), "a rejected request reached the backend")
			}
		})
	}
}

// TestTooLargeChunked covers a body without Content-Length that crosses the
// limit while streaming.
func TestTooLargeChunked(t *testing.T) {
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, routeConfig(backend.URL, "    maxBodyBytes: 4KiB"))
	resp := gw.post("/orders", "text/xml", io.MultiReader(bytes.NewReader(make([]byte, 3000)), bytes.NewReader(make([]byte, 3000))))
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Equal(t, "soap:Client", parseFault(t, resp).Body.Fault.Code11)
}

func TestUnknownPathIsFault(t *testing.T) {
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, routeConfig(backend.URL, ""))
	resp := gw.post("/ordersx", "text/xml", strings.NewReader("<x/>"))
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "soap:Client", parseFault(t, resp).Body.Fault.Code11)
	assert.Zero(t, backend.count())
}

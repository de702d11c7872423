package gateway

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
)

func TestCheckUpgrade(t *testing.T) {
	tests := map[string]struct {
		header http.Header
		refuse bool
	}{
		"ok/none":                 {http.Header{"Content-Type": {"text/xml"}}, false},
		"ok/keep-alive":           {http.Header{"Connection": {"keep-alive"}}, false},
		"ok/close":                {http.Header{"Connection": {"close"}}, false},
		"ok/token-substring":      {http.Header{"Connection": {"upgrades, x-upgrade"}}, false},
		"ok/upgrade-h2c-offer":    {http.Header{"Upgrade": {"h2c"}, "Connection": {"Upgrade, HTTP2-Settings"}, "Http2-Settings": {"AAMAAABkAARAAAAAAAIAAAAA"}}, false},
		"ok/upgrade-h2c-only":     {http.Header{"Upgrade": {"h2c"}}, false},
		"fail/upgrade-h2c-and-ws": {http.Header{"Upgrade": {"h2c, websocket"}}, true},
		"fail/upgrade-h2-tls":     {http.Header{"Upgrade": {"h2"}}, true},
		"fail/upgrade-websocket":  {http.Header{"Upgrade": {"websocket"}}, true},
		"fail/upgrade-empty":      {http.Header{"Upgrade": {""}}, true},
		"ok/upgrade-lower":        {http.Header{"upgrade": {"H2C"}}, false},
		"fail/upgrade-two-values": {http.Header{"Upgrade": {"h2c", "websocket"}}, true},
		"fail/http2-settings":     {http.Header{"Http2-Settings": {"AAMAAABkAARAAAAAAAIAAAAA"}}, true},
		"fail/http2-settings-raw": {http.Header{"HTTP2-Settings": {""}}, true},
		"fail/connection-upgrade": {http.Header{"Connection": {"Upgrade"}}, true},
		"fail/connection-list":    {http.Header{"Connection": {"keep-alive, UPGRADE"}}, true},
		"fail/connection-h2":      {http.Header{"Connection": {"keep-alive", "Http2-Settings"}}, true},
		"fail/connection-spaced":  {http.Header{"Connection": {"keep-alive ,  upgrade  "}}, true},
		"fail/extended-connect":   {http.Header{":protocol": {"websocket"}}, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := checkUpgrade(tc.header)
			if tc.refuse {
				assert.ErrorIs(t, err, errUpgrade)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// TestUpgradeRefused: a request asking to switch protocols gets the 400
// fault on every path, routed or not, and nothing reaches the backend.
func TestUpgradeRefused(t *testing.T) {
	rec := newRecorder(t)
	f := newFront(t, rec.URL, nil)
	for name, headers := range map[string][]string{
		"fail/websocket":      {"Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="},
		"fail/lower-case":     {"connection: keep-alive, upgrade", "upgrade: websocket"},
		"fail/h2c-and-ws":     {"Connection: Upgrade", "Upgrade: h2c, websocket"},
		"fail/connection-end": {"Connection: keep-alive, Upgrade"},
		"fail/settings-only":  {"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"},
	} {
		for _, path := range []string{"/orders", "/unrouted"} {
			t.Run(name+path, func(t *testing.T) {
				resp, body := rawPost(t, f.Listener.Addr().String(), path, headers, []byte(testEnvelope))
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
				assert.Contains(t, string(body), "Protocol upgrade not allowed")
				assert.NotEqual(t, http.StatusSwitchingProtocols, resp.StatusCode)
			})
		}
	}
	assert.Empty(t, rec.requests(), "an upgrade request reached the backend")
	// Refused before routing: counted as unrouted.
	assert.Equal(t, 10.0, f.routeOutcome(t, metrics.NoRoute, metrics.BadRequest))
}

// TestH2COfferIgnored: an offer to upgrade to h2c alone (Apache CXF 4's
// default on plain HTTP) is ignored, not refused: the request is served as
// HTTP/1.1, no 101 is sent, and the backend sees none of the offer while the
// client's other Connection tokens keep their hop-by-hop meaning.
func TestH2COfferIgnored(t *testing.T) {
	rec := newRecorder(t)
	f := newFront(t, rec.URL, nil)
	for name, headers := range map[string][]string{
		"ok/cxf-default":  {"Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"},
		"ok/lower-case":   {"connection: keep-alive, upgrade", "upgrade: H2C"},
		"ok/upgrade-only": {"Upgrade: h2c"},
		"ok/named-header": {"Connection: Upgrade, X-Hop", "Upgrade: h2c", "X-Hop: secret"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := rawPost(t, f.Listener.Addr().String(), "/orders", headers, []byte(testEnvelope))
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			h := rec.last(t).header
			for _, n := range []string{"Upgrade", "Http2-Settings", "X-Hop"} {
				assert.Empty(t, h.Values(n), n)
			}
			for _, v := range h.Values("Connection") {
				assert.NotContains(t, strings.ToLower(v), "upgrade")
			}
		})
	}
}

// switchingBackend answers every request with status (a 1xx) and then, as
// a tunnel would, tries to talk on the connection: it writes tunnelBytes
// and reports what it reads back (nothing, once wssgw closed it).
type switchingBackend struct {
	ln      net.Listener
	readErr chan error
}

const tunnelBytes = "<unverified-tunnel-traffic/>"

func newSwitchingBackend(t *testing.T, status string, final bool) *switchingBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	b := &switchingBackend{ln: ln, readErr: make(chan error, 8)}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go b.serve(conn, status, final)
		}
	}()
	return b
}

func (b *switchingBackend) serve(conn net.Conn, status string, final bool) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, req.Body)
	fmt.Fprintf(conn, "HTTP/1.1 %s\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n", status)
	if final {
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: %d\r\n\r\n%s", len(tunnelBytes), tunnelBytes)
		b.readErr <- nil
		return
	}
	_, _ = io.WriteString(conn, tunnelBytes)
	buf := make([]byte, 64)
	n, err := br.Read(buf)
	if n > 0 {
		err = fmt.Errorf("backend read %q through the tunnel", buf[:n])
	}
	b.readErr <- err
}

// TestBackendSwitchNeverRelayed: a backend that answers 101 (or another
// informational status than 100 and 103) gets a 502 fault, the client never
// sees its bytes, and wssgw closes the backend connection instead of
// splicing it to the client. The request reaches the proxy with Upgrade
// headers, as it would if checkUpgrade were missing: the proxy's own
// defences are tested here.
func TestBackendSwitchNeverRelayed(t *testing.T) {
	tests := map[string]struct {
		status string
		final  bool // a final 200 follows the 1xx
		want   int
	}{
		"fail/101":             {"101 Switching Protocols", false, http.StatusBadGateway},
		"fail/102":             {"102 Processing", true, http.StatusBadGateway},
		"fail/199":             {"199 Whatever", true, http.StatusBadGateway},
		"ok/103-early-hints":   {"103 Early Hints", true, http.StatusOK},
		"ok/100-then-response": {"100 Continue", true, http.StatusOK},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			backend := newSwitchingBackend(t, tc.status, tc.final)
			f := newFront(t, "http://"+backend.ln.Addr().String(), nil)
			gw := f.Config.Handler.(*Gateway)
			// The route's proxy alone, behind an exchange as forward()
			// hands it over.
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				e := &exchange{ResponseWriter: w, id: "t", route: gw.routes[0], body: &countingBody{rc: r.Body}}
				r.Body = e.body
				gw.routes[0].proxy.ServeHTTP(e, r)
			}))
			t.Cleanup(proxy.Close)
			headers := []string{"Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"}
			resp, body := rawPost(t, proxy.Listener.Addr().String(), "/orders", headers, []byte(testEnvelope))
			assert.Equal(t, tc.want, resp.StatusCode, string(body))
			if tc.want != http.StatusOK {
				assert.NotContains(t, string(body), tunnelBytes)
				assert.Contains(t, string(body), "Backend service unavailable")
			}
			select {
			case err := <-backend.readErr:
				if !tc.final {
					require.Error(t, err)
					assert.True(t, errors.Is(err, io.EOF) || strings.Contains(err.Error(), "reset"), "the tunnel must be closed: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the backend connection stayed open")
			}
		})
	}
}

// TestRewriteDropsUpgrade: the outbound request never asks to switch, even
// when the inbound one did (ReverseProxy re-adds Upgrade after its
// hop-by-hop removal).
func TestRewriteDropsUpgrade(t *testing.T) {
	rec := newRecorder(t)
	f := newFront(t, rec.URL, nil)
	gw := f.Config.Handler.(*Gateway)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw.routes[0].proxy.ServeHTTP(&exchange{ResponseWriter: w, route: gw.routes[0]}, r)
	}))
	t.Cleanup(proxy.Close)
	resp, body := rawPost(t, proxy.Listener.Addr().String(), "/orders",
		[]string{"Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"}, []byte(testEnvelope))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	h := rec.last(t).header
	for _, name := range []string{"Upgrade", "Http2-Settings", "Connection"} {
		assert.Empty(t, h.Values(name), name)
	}
}

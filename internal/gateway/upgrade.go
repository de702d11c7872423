package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync/atomic"
)

// wssgw verifies one message per request: a connection switched to another
// protocol (h2c, WebSocket) after a verified request would carry every later
// byte to the backend unverified. Both ends are closed: a client asking to
// switch is refused before routing, and a backend that switches (or sends
// other informational responses the client could take for a protocol step)
// gets a 502 instead of a relay.
var (
	// errUpgrade is a request asking to switch protocols (classify: 400).
	errUpgrade = errors.New("gateway: protocol upgrade not allowed")
	// errBackendSwitch is a backend answering 101 or an unexpected 1xx;
	// proxyError makes it a backendError (502).
	errBackendSwitch = errors.New("gateway: backend switched protocols")
)

// checkUpgrade refuses a request that asks to switch protocols: an Upgrade
// header (RFC 9110 §7.8: WebSocket, h2c), an HTTP2-Settings header (RFC
// 7540 §3.2, the h2c upgrade), a Connection header naming either (in any
// case and position; RFC 9110 §7.6.1), or an extended CONNECT's :protocol
// (RFC 8441). Header names are compared folded so that no spelling slips
// past.
func checkUpgrade(h http.Header) error {
	for name, values := range h {
		switch {
		case strings.EqualFold(name, "Upgrade"), strings.EqualFold(name, "HTTP2-Settings"), name == ":protocol":
			return fmt.Errorf("%w: %s header", errUpgrade, name)
		case strings.EqualFold(name, "Connection"):
			for _, v := range values {
				for opt := range strings.SplitSeq(v, ",") {
					opt = strings.TrimSpace(opt)
					if strings.EqualFold(opt, "upgrade") || strings.EqualFold(opt, "http2-settings") {
						return fmt.Errorf("%w: Connection: %s", errUpgrade, opt)
					}
				}
			}
		}
	}
	return nil
}

// dropUpgrade removes from an outbound request what could ask the backend
// to switch protocols. checkUpgrade already refused such requests; this is
// defence in depth, since httputil.ReverseProxy re-adds "Connection:
// Upgrade" and the Upgrade header after its hop-by-hop removal.
func dropUpgrade(h http.Header) {
	h.Del("Connection")
	h.Del("Upgrade")
	h.Del("HTTP2-Settings")
	delete(h, ":protocol")
}

// noSwitchTransport is a route's transport as the proxy sees it: a backend
// answer of 101 Switching Protocols or an informational status other than
// 100 Continue and 103 Early Hints becomes an error (502) instead of a
// response. httputil.ReverseProxy would otherwise splice the connections on
// a 101 (handleUpgradeResponse) and relay every 1xx to the client.
type noSwitchTransport struct{ next http.RoundTripper }

func (t noSwitchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var refused atomic.Pointer[error]
	req = req.WithContext(guardInformational(req.Context(), &refused))
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		if p := refused.Load(); p != nil {
			return nil, *p
		}
		return nil, err
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// The body is the raw connection: closing it closes the
		// connection, so nothing more is read from or written to it.
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%w: status 101, Upgrade %q", errBackendSwitch, resp.Header.Get("Upgrade"))
	}
	return resp, nil
}

// guardInformational replaces the context's client trace with a copy whose
// Got1xxResponse refuses every 1xx but 100 and 103 (the transport then
// fails the round trip) and passes those two to the proxy's own hook,
// which relays them. The proxy's trace has to be hidden, not composed:
// httptrace composes hooks so that the outer one (the relay) runs even when
// the inner one fails. refused records the refusal; the transport's error
// does not wrap it. The hook runs on the transport's reading goroutine.
func guardInformational(ctx context.Context, refused *atomic.Pointer[error]) context.Context {
	var trace httptrace.ClientTrace
	if outer := httptrace.ContextClientTrace(ctx); outer != nil {
		trace = *outer
	}
	relay := trace.Got1xxResponse
	trace.Got1xxResponse = func(code int, h textproto.MIMEHeader) error {
		if code != http.StatusContinue && code != http.StatusEarlyHints {
			err := fmt.Errorf("%w: informational status %d", errBackendSwitch, code)
			refused.CompareAndSwap(nil, &err)
			return err
		}
		if relay != nil {
			return relay(code, h)
		}
		return nil
	}
	return httptrace.WithClientTrace(hiddenTrace{ctx}, &trace)
}

// hiddenTrace is a context without a client trace: httptrace.WithClientTrace
// on it installs a trace that is not composed with the parent's.
type hiddenTrace struct{ context.Context }

func (c hiddenTrace) Value(key any) any {
	v := c.Context.Value(key)
	if _, ok := v.(*httptrace.ClientTrace); ok {
		return nil
	}
	return v
}

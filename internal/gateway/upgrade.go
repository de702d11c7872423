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
//
// One offer is not refused but ignored: an upgrade to h2c and nothing else.
// RFC 9110 §7.8 lets a server ignore an Upgrade it does not take (RFC 9113
// §3.1 deprecates this one), and wssgw never answers 101, so the request is
// served as HTTP/1.1 and the connection stays HTTP/1.1; ignoreOffer strips
// the offer before anything else reads the request. Apache CXF 4's default
// HTTP conduit (java.net.http) makes this offer on every plain-HTTP request;
// refusing it broke every stock CXF client (issue 15).
func checkUpgrade(h http.Header) error {
	h2c := h2cOffer(h)
	for name, values := range h {
		switch {
		case strings.EqualFold(name, "Upgrade"), strings.EqualFold(name, "HTTP2-Settings"):
			if !h2c {
				return fmt.Errorf("%w: %s header", errUpgrade, name)
			}
		case name == ":protocol":
			return fmt.Errorf("%w: %s header", errUpgrade, name)
		case strings.EqualFold(name, "Connection"):
			for _, v := range values {
				for opt := range strings.SplitSeq(v, ",") {
					opt = strings.TrimSpace(opt)
					if !h2c && (strings.EqualFold(opt, "upgrade") || strings.EqualFold(opt, "http2-settings")) {
						return fmt.Errorf("%w: Connection: %s", errUpgrade, opt)
					}
				}
			}
		}
	}
	return nil
}

// h2cOffer reports whether every Upgrade header names h2c and nothing else
// (tokens compared folded, RFC 9110 §7.8), with at least one such token.
func h2cOffer(h http.Header) bool {
	n := 0
	for name, values := range h {
		if !strings.EqualFold(name, "Upgrade") {
			continue
		}
		for _, v := range values {
			for tok := range strings.SplitSeq(v, ",") {
				if !strings.EqualFold(strings.TrimSpace(tok), "h2c") {
					return false
				}
				n++
			}
		}
	}
	return n > 0
}

// ignoreOffer removes an ignored h2c offer (checkUpgrade) from a request,
// under any spelling of the header names, so that no later step (the log,
// the outbound request) sees it: the Upgrade and HTTP2-Settings headers, and
// their tokens in Connection. Connection's other tokens stay, since the
// proxy removes the headers they name (RFC 9110 §7.6.1).
func ignoreOffer(h http.Header) {
	if !h2cOffer(h) {
		return
	}
	for name, values := range h {
		switch {
		case strings.EqualFold(name, "Upgrade"), strings.EqualFold(name, "HTTP2-Settings"):
			delete(h, name)
		case strings.EqualFold(name, "Connection"):
			var keep []string
			for _, v := range values {
				for opt := range strings.SplitSeq(v, ",") {
					opt = strings.TrimSpace(opt)
					if opt != "" && !strings.EqualFold(opt, "upgrade") && !strings.EqualFold(opt, "http2-settings") {
						keep = append(keep, opt)
					}
				}
			}
			if len(keep) == 0 {
				delete(h, name)
			} else {
				h[name] = []string{strings.Join(keep, ", ")}
			}
		}
	}
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

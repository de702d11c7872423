package gateway

import (
	"net/http/httputil"
	"sort"
	"strings"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/limit"
	"github.com/wssgw/wssgw/internal/metrics"
)

// route is a config.Route made ready to serve.
type route struct {
	name         string
	prefix       string
	maxBodyBytes int64
	readTimeout  time.Duration
	proxy        *httputil.ReverseProxy
	metrics      *metrics.RouteMetrics
	security     *security                 // nil for policy none
	gate         *gate                     // nil with unsafeSkipGate (gate.go)
	responder    *responder                // nil when responses are not signed
	egress       *egressRoute              // nil for ingress routes (egress.go)
	limiter      *limit.Limiter            // nil without routes[].limits (limits.go)
	rateLimits   *metrics.RateLimitMetrics // its refusals
}

// routeTable finds the route for a path by longest prefix on segment
// boundaries. Routes are few, so a sorted slice beats a trie.
type routeTable []*route

func newRouteTable(routes []*route) routeTable {
	t := append(routeTable(nil), routes...)
	sort.Slice(t, func(i, j int) bool { return len(t[i].prefix) > len(t[j].prefix) })
	return t
}

func (t routeTable) match(path string) *route {
	for _, r := range t {
		if matchPrefix(path, r.prefix) {
			return r
		}
	}
	return nil
}

// matchPrefix reports whether prefix is path or a leading run of its
// segments, so /orders matches /orders/x but never /ordersx.
func matchPrefix(path, prefix string) bool {
	if prefix == "/" {
		return strings.HasPrefix(path, "/")
	}
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	return len(path) == len(prefix) || path[len(prefix)] == '/'
}

// newRoute builds a route from its validated config.
func newRoute(rc config.Route, m *metrics.Metrics, pool *bufferPool, reserved reservedHeaders) (*route, error) {
	p, err := newProxy(rc, pool, reserved)
	if err != nil {
		return nil, err
	}
	rm := m.Route(rc.Name)
	if rc.Policy != config.PolicyNone {
		rm.Secured() // engine series at zero
	}
	return &route{
		name:         rc.Name,
		prefix:       rc.Path,
		maxBodyBytes: int64(rc.MaxBodyBytes),
		readTimeout:  rc.Timeouts.Read,
		proxy:        p,
		metrics:      rm,
	}, nil
}

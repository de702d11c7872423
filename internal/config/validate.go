package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// routeName is the shape of a route name; names become metric label values
// and log fields, so they are kept short and plain.
var routeName = regexp.MustCompile(`^[a-z0-9]([a-z0-9_-]{0,62}[a-z0-9])?$`)

// Validate checks the whole configuration and returns every problem found,
// as Problems, or nil. It reads the key and certificate files it names, so
// that `wssgw validate` catches a bad file before a deployment does.
func (c *Config) Validate() error {
	var ps Problems
	checkAddr(&ps, "listen", c.Listen)
	checkAddr(&ps, "admin.listen", c.Admin.Listen)
	if c.Listen != "" && c.Listen == c.Admin.Listen && !strings.HasSuffix(c.Listen, ":0") {
		ps.add("admin.listen", "must differ from listen (%s): metrics and health never share the SOAP port", c.Listen)
	}
	c.TLS.validate(&ps, "tls")
	c.Server.validate(&ps, "server")
	c.Server.Memory.validate(&ps, "server.memory")
	checkOneOf(&ps, "log.format", c.Log.Format, "json", "text")
	checkOneOf(&ps, "log.level", c.Log.Level, "debug", "info", "warn", "error")
	checkNonNegative(&ps, "shutdown.delay", c.Shutdown.Delay)
	checkPositive(&ps, "shutdown.drainTimeout", c.Shutdown.DrainTimeout)
	c.validateRoutes(&ps)
	c.validatePolicies(&ps)
	c.Replay.validate(&ps, "replay")
	c.XML.validate(&ps, "xml")
	c.Templates.validate(&ps, "templates")
	c.MIME.validate(&ps, "mime")
	c.Clients.validate(&ps, "clients")
	return ps.Err()
}

func (t ServerTLS) validate(ps *Problems, key string) {
	checkOneOf(ps, key+".clientAuth", t.ClientAuth, "none", "request", "require")
	checkOneOf(ps, key+".minVersion", t.MinVersion, "1.2", "1.3")
	if !t.Enabled() {
		if t.ClientCAFile != "" || (t.ClientAuth != "" && t.ClientAuth != "none") {
			ps.add(key+".certFile", "is required when client certificates are configured")
		}
		return
	}
	checkKeyPair(ps, key, t.CertFile, t.KeyFile)
	if t.ClientAuth != "none" && t.ClientCAFile == "" {
		// A client certificate that is not verified against a CA proves
		// nothing, so request and require both need one.
		ps.add(key+".clientCAFile", "is required when clientAuth is %s", t.ClientAuth)
	}
	if t.ClientCAFile != "" {
		checkCAFile(ps, key+".clientCAFile", t.ClientCAFile)
	}
}

func (s Server) validate(ps *Problems, key string) {
	checkPositive(ps, key+".readHeaderTimeout", s.ReadHeaderTimeout)
	checkPositive(ps, key+".idleTimeout", s.IdleTimeout)
	checkNonNegative(ps, key+".writeTimeout", s.WriteTimeout)
	if s.MaxHeaderBytes < 1024 {
		ps.add(key+".maxHeaderBytes", "must be at least 1KiB, got %s", s.MaxHeaderBytes)
	}
}

func (c *Config) validateRoutes(ps *Problems) {
	if len(c.Routes) == 0 {
		ps.add("routes", "at least one route is required")
	}
	names, paths := map[string]int{}, map[string]int{}
	for i, r := range c.Routes {
		key := fmt.Sprintf("routes[%d]", i)
		r.validate(ps, key)
		r.validateKind(ps, key, c.Policies)
		if _, ok := c.Policies[r.Policy]; !ok && r.Policy != PolicyNone {
			ps.add(key+".policy", "unknown policy %q (known: %s)", r.Policy, strings.Join(c.policyNames(), ", "))
		}
		if j, dup := names[r.Name]; dup && r.Name != "" {
			ps.add(key+".name", "%q is already used by routes[%d]", r.Name, j)
		}
		names[r.Name] = i
		if j, dup := paths[r.Path]; dup && r.Path != "" {
			ps.add(key+".path", "%q is already used by routes[%d]", r.Path, j)
		}
		paths[r.Path] = i
	}
}

func (r Route) validate(ps *Problems, key string) {
	if !routeName.MatchString(r.Name) {
		ps.add(key+".name", "must be 1-64 characters of a-z, 0-9, '-' and '_', got %q", r.Name)
	}
	checkPath(ps, key+".path", r.Path)
	u := checkBackend(ps, key+".backend", r.Backend)
	if r.MaxBodyBytes <= 0 {
		ps.add(key+".maxBodyBytes", "must be positive, got %d", int64(r.MaxBodyBytes))
	}
	if r.MaxIdleConns < 0 {
		ps.add(key+".maxIdleConns", "must not be negative, got %d", r.MaxIdleConns)
	}
	checkPositive(ps, key+".timeouts.read", r.Timeouts.Read)
	checkPositive(ps, key+".timeouts.connect", r.Timeouts.Connect)
	checkPositive(ps, key+".timeouts.backend", r.Timeouts.Backend)
	checkPositive(ps, key+".timeouts.idle", r.Timeouts.Idle)
	checkPositive(ps, key+".timeouts.backendBodyIdle", r.Timeouts.BackendBodyIdle)
	r.BackendTLS.validate(ps, key+".backendTLS", u)
	r.IdentityHeaders.validate(ps, key+".identityHeaders")
	r.Limits.validate(ps, key+".limits", r.Policy)
	if r.UnsafeSkipGate && r.Policy != PolicyNone {
		// A secured route always parses the message: there is no gate to
		// skip, and an option that silently does nothing misleads.
		ps.add(key+".unsafeSkipGate", "is only valid with policy %q, got policy %q", PolicyNone, r.Policy)
	}
}

// policyNames lists "none" and the configured policy names, sorted.
func (c *Config) policyNames() []string {
	names := []string{PolicyNone}
	for n := range c.Policies {
		names = append(names, n)
	}
	sort.Strings(names[1:])
	return names
}

func (b BackendTLS) validate(ps *Problems, key string, backend *url.URL) {
	if b == (BackendTLS{}) {
		return
	}
	if backend != nil && backend.Scheme != "https" {
		ps.add(key, "is set but the backend is not https: %q", backend.String())
	}
	if b.CAFile != "" {
		checkCAFile(ps, key+".caFile", b.CAFile)
	}
	if b.CertFile != "" || b.KeyFile != "" {
		checkKeyPair(ps, key, b.CertFile, b.KeyFile)
	}
}

func checkAddr(ps *Problems, key, addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		ps.add(key, "must be host:port, got %q", addr)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		ps.add(key, "port must be a number from 0 to 65535, got %q", port)
	}
	if host != "" && net.ParseIP(host) == nil && strings.ContainsAny(host, "/ ") {
		ps.add(key, "host %q is neither an IP address nor a host name", host)
	}
}

func checkPath(ps *Problems, key, p string) {
	switch {
	case !strings.HasPrefix(p, "/"):
		ps.add(key, "must start with '/', got %q", p)
	case len(p) > 1 && strings.HasSuffix(p, "/"):
		ps.add(key, "must not end with '/' (prefixes match on segment boundaries), got %q", p)
	case strings.ContainsAny(p, "?#%") || strings.Contains(p, "//") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		ps.add(key, "must be a clean path without query, fragment, escapes or dot segments, got %q", p)
	case strings.Contains(p, "/./") || strings.HasSuffix(p, "/.") || strings.ContainsAny(p, ";\\") ||
		strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		// The gateway refuses such request paths (gateway/path.go): the
		// route could never match.
		ps.add(key, "must not contain . segments, ';', '\\' or control characters (requests with them are refused), got %q", p)
	}
}

func checkBackend(ps *Problems, key, raw string) *url.URL {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		ps.add(key, "is required")
	case err != nil:
		ps.add(key, "is not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		ps.add(key, "scheme must be http or https, got %q", raw)
	case u.Host == "":
		ps.add(key, "has no host: %q", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		ps.add(key, "must not carry user info, a query or a fragment: %q", raw)
	default:
		return u
	}
	return nil
}

func checkOneOf(ps *Problems, key, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	ps.add(key, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
}

func checkPositive(ps *Problems, key string, d time.Duration) {
	if d <= 0 {
		ps.add(key, "must be a positive duration such as 30s, got %s", d)
	}
}

func checkNonNegative(ps *Problems, key string, d time.Duration) {
	if d < 0 {
		ps.add(key, "must not be negative, got %s", d)
	}
}

func checkKeyPair(ps *Problems, key, certFile, keyFile string) {
	switch {
	case keyFile == "":
		ps.add(key+".keyFile", "is required when certFile is set")
		return
	case certFile == "":
		ps.add(key+".certFile", "is required when keyFile is set")
		return
	}
	if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		ps.add(key+".certFile", "cannot load key pair: %v", err)
	}
}

func checkCAFile(ps *Problems, key, file string) {
	pem, err := os.ReadFile(file)
	if err != nil {
		ps.add(key, "cannot read: %v", err)
		return
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		ps.add(key, "holds no PEM certificate: %s", file)
	}
}

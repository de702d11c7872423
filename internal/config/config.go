package config

import "time"

// PolicyNone is the route policy that forwards messages untouched.
const PolicyNone = "none"

// Config is the whole wssgw configuration. The mapstructure tags are the
// user-facing key names (see config.example.yaml); they are a contract and do
// not change once released.
type Config struct {
	// Listen is the data-plane address (host:port) that partners send SOAP to.
	Listen string `mapstructure:"listen"`
	// TLS optionally terminates TLS on the data listener.
	TLS ServerTLS `mapstructure:"tls"`
	// Server holds connection-level limits of the data listener.
	Server Server `mapstructure:"server"`
	// Admin is the separate listener for metrics, health and pprof.
	Admin Admin `mapstructure:"admin"`
	// Log configures the structured log.
	Log Log `mapstructure:"log"`
	// Shutdown configures the graceful drain on SIGTERM/SIGINT.
	Shutdown Shutdown `mapstructure:"shutdown"`
	// Routes map request path prefixes to backends and policies.
	Routes []Route `mapstructure:"routes"`
	// Policies are the named security policies routes refer to. Names are
	// lower case (YAML keys are case-insensitive here).
	Policies map[string]Policy `mapstructure:"policies"`
	// Replay is the replay store shared by all policies.
	Replay Replay `mapstructure:"replay"`
	// XML bounds what a message may claim of the strict XML gate.
	XML XMLLimits `mapstructure:"xml"`
	// Templates configures the template automaton (the fast path).
	Templates Templates `mapstructure:"templates"`
	// MIME bounds the MTOM/SwA packages secured routes read.
	MIME MIMELimits `mapstructure:"mime"`
	// Clients says how rate and concurrency limits tell clients apart
	// (limits.go).
	Clients Clients `mapstructure:"clients"`
}

// ServerTLS is TLS on the data listener. Empty CertFile and KeyFile mean
// plain HTTP.
type ServerTLS struct {
	CertFile string `mapstructure:"certFile"`
	KeyFile  string `mapstructure:"keyFile"`
	// ClientCAFile holds the CAs that client certificates must chain to.
	ClientCAFile string `mapstructure:"clientCAFile"`
	// ClientAuth is none, request, or require.
	ClientAuth string `mapstructure:"clientAuth"`
	// MinVersion is "1.2" or "1.3".
	MinVersion string `mapstructure:"minVersion"`
}

// Enabled reports whether the data listener terminates TLS.
func (t ServerTLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Server holds limits that apply to every connection before a route is known.
type Server struct {
	// ReadHeaderTimeout bounds the time to read request headers (slowloris).
	ReadHeaderTimeout time.Duration `mapstructure:"readHeaderTimeout"`
	// IdleTimeout closes idle client keep-alive connections.
	IdleTimeout time.Duration `mapstructure:"idleTimeout"`
	// WriteTimeout bounds writing a whole response; 0 means no bound, so
	// large streamed responses are not cut off.
	WriteTimeout time.Duration `mapstructure:"writeTimeout"`
	// MaxHeaderBytes bounds the request line and headers.
	MaxHeaderBytes ByteSize `mapstructure:"maxHeaderBytes"`
	// Memory bounds what in-flight requests hold at once (memory.go).
	Memory Memory `mapstructure:"memory"`
}

// Admin is the admin listener: /metrics, /healthz, /readyz, /debug/pprof,
// /templates.
type Admin struct {
	Listen string `mapstructure:"listen"`
	// Pprof mounts /debug/pprof; off by default because profiles reveal
	// internals and cost CPU.
	Pprof bool `mapstructure:"pprof"`
	// Templates mounts /templates, /templates/{id}, /templates/export and
	// /templates/import; off by default because an export holds real
	// accepted partner messages (payload, tokens, signatures) and an
	// import teaches the fast path, both to anyone who reaches the admin
	// port (often every Prometheus scraper).
	Templates bool `mapstructure:"templates"`
}

// Log configures log/slog.
type Log struct {
	// Format is json or text.
	Format string `mapstructure:"format"`
	// Level is debug, info, warn or error.
	Level string `mapstructure:"level"`
}

// Shutdown configures the drain on SIGTERM/SIGINT.
type Shutdown struct {
	// Delay keeps serving after readiness turns false, so that load
	// balancers (Kubernetes endpoints) stop sending before listeners close.
	Delay time.Duration `mapstructure:"delay"`
	// DrainTimeout bounds how long in-flight requests may take to finish.
	DrainTimeout time.Duration `mapstructure:"drainTimeout"`
}

// Route forwards requests whose path starts with Path to Backend.
type Route struct {
	// Name identifies the route in logs and metric labels.
	Name string `mapstructure:"name"`
	// Path is a path prefix, matched on segment boundaries: /orders
	// matches /orders and /orders/v2 but not /ordersx.
	Path string `mapstructure:"path"`
	// Backend is the http or https base URL of the SOAP service.
	Backend string `mapstructure:"backend"`
	// Policy names the security policy (a key of policies); "none"
	// verifies nothing (requests are still gated unless UnsafeSkipGate).
	Policy string `mapstructure:"policy"`
	// MaxBodyBytes bounds the request body; larger bodies get 413.
	MaxBodyBytes ByteSize `mapstructure:"maxBodyBytes"`
	// MaxIdleConns bounds idle keep-alive connections kept to the backend.
	MaxIdleConns int `mapstructure:"maxIdleConns"`
	// Timeouts bound each phase of an exchange.
	Timeouts RouteTimeouts `mapstructure:"timeouts"`
	// BackendTLS configures TLS to an https backend.
	BackendTLS BackendTLS `mapstructure:"backendTLS"`
	// IdentityHeaders pass the verified identity to the backend.
	IdentityHeaders IdentityHeaders `mapstructure:"identityHeaders"`
	// UnsafeSkipGate streams a policy-none route's requests to the backend
	// unread, as before issue 13: no XML gate (DTDs, entities, limits, the
	// envelope rule), no charset or SOAP version check. Only valid with
	// policy none; unsafe for any backend that parses XML.
	UnsafeSkipGate bool `mapstructure:"unsafeSkipGate"`
	// Limits are the route's rate and concurrency limits (limits.go).
	Limits RouteLimits `mapstructure:"limits"`
	// Kind is ingress (default: partners call the backend) or egress (the
	// backend's legacy client calls a partner, issue 15; egress.go).
	Kind string `mapstructure:"kind"`
	// Egress secures an egress route's requests and verifies the
	// partner's responses; only read when Kind is egress.
	Egress Egress `mapstructure:"egress"`
}

// RouteTimeouts bound the phases of one exchange on a route.
type RouteTimeouts struct {
	// Read bounds reading the request body from the client.
	Read time.Duration `mapstructure:"read"`
	// Connect bounds dialing the backend.
	Connect time.Duration `mapstructure:"connect"`
	// Backend bounds the wait for the backend's response headers after the
	// request was sent; exceeding it gives 504.
	Backend time.Duration `mapstructure:"backend"`
	// Idle closes backend keep-alive connections unused for this long.
	Idle time.Duration `mapstructure:"idle"`
	// BackendBodyIdle cuts a backend response whose body makes no progress
	// for this long (Backend covers only the headers): a buffered response
	// gets 504, a streamed one a cut connection; outcome backend_stalled
	// (issue 16).
	BackendBodyIdle time.Duration `mapstructure:"backendBodyIdle"`
}

// BackendTLS is the client side of TLS to an https backend.
type BackendTLS struct {
	// CAFile is a PEM bundle of CAs trusted for the backend; empty means the
	// system roots.
	CAFile string `mapstructure:"caFile"`
	// CertFile and KeyFile are an optional client certificate.
	CertFile string `mapstructure:"certFile"`
	KeyFile  string `mapstructure:"keyFile"`
	// ServerName overrides the name checked against the backend's
	// certificate.
	ServerName string `mapstructure:"serverName"`
}

package config

import "time"

// Route defaults, applied by ApplyDefaults to fields left at zero.
const (
	DefaultMaxBodyBytes   ByteSize = 10 << 20
	DefaultMaxIdleConns            = 128
	DefaultReadTimeout             = 30 * time.Second
	DefaultConnectTimeout          = 5 * time.Second
	DefaultBackendTimeout          = 30 * time.Second
	DefaultIdleTimeout             = 90 * time.Second
)

// Default returns a configuration with every default set and no routes.
func Default() Config {
	return Config{
		Listen: "127.0.0.1:8080",
		TLS:    ServerTLS{ClientAuth: "none", MinVersion: "1.2"},
		Server: Server{
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       120 * time.Second,
			MaxHeaderBytes:    64 << 10,
		},
		Admin:    Admin{Listen: "127.0.0.1:9090"},
		Log:      Log{Format: "json", Level: "info"},
		Shutdown: Shutdown{DrainTimeout: 30 * time.Second},
	}
}

// DefaultRoute returns a route with every default set. A loader decodes each
// route of a file over it, so that a key set explicitly to zero stays zero
// and is reported by Validate instead of silently becoming the default.
func DefaultRoute() Route {
	return Route{
		Policy:       PolicyNone,
		MaxBodyBytes: DefaultMaxBodyBytes,
		MaxIdleConns: DefaultMaxIdleConns,
		Timeouts: RouteTimeouts{
			Read:    DefaultReadTimeout,
			Connect: DefaultConnectTimeout,
			Backend: DefaultBackendTimeout,
			Idle:    DefaultIdleTimeout,
		},
	}
}

// ApplyDefaults fills the per-route fields left at zero, for configurations
// built in code.
func (c *Config) ApplyDefaults() {
	d := DefaultRoute()
	for i := range c.Routes {
		r := &c.Routes[i]
		setDefault(&r.Policy, d.Policy)
		setDefault(&r.MaxBodyBytes, d.MaxBodyBytes)
		setDefault(&r.MaxIdleConns, d.MaxIdleConns)
		setDefault(&r.Timeouts.Read, d.Timeouts.Read)
		setDefault(&r.Timeouts.Connect, d.Timeouts.Connect)
		setDefault(&r.Timeouts.Backend, d.Timeouts.Backend)
		setDefault(&r.Timeouts.Idle, d.Timeouts.Idle)
	}
}

func setDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

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

// ApplyDefaults fills the per-route fields a file left at zero. Top-level
// defaults come from Default, which the loader decodes the file over.
func (c *Config) ApplyDefaults() {
	for i := range c.Routes {
		r := &c.Routes[i]
		setDefault(&r.Policy, PolicyNone)
		setDefault(&r.MaxBodyBytes, DefaultMaxBodyBytes)
		setDefault(&r.MaxIdleConns, DefaultMaxIdleConns)
		setDefault(&r.Timeouts.Read, DefaultReadTimeout)
		setDefault(&r.Timeouts.Connect, DefaultConnectTimeout)
		setDefault(&r.Timeouts.Backend, DefaultBackendTimeout)
		setDefault(&r.Timeouts.Idle, DefaultIdleTimeout)
	}
}

func setDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

package config

import (
	"time"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Route defaults, applied by ApplyDefaults to fields left at zero.
const (
	DefaultMaxBodyBytes   ByteSize = 10 << 20
	DefaultMaxIdleConns            = 128
	DefaultReadTimeout             = 30 * time.Second
	DefaultConnectTimeout          = 5 * time.Second
	DefaultBackendTimeout          = 30 * time.Second
	DefaultIdleTimeout             = 90 * time.Second
)

// DefaultBackendBodyIdle is the default timeouts.backendBodyIdle: a backend
// silent this long mid-body has stalled; a slow but live one sends
// something sooner (issue 16).
const DefaultBackendBodyIdle = 30 * time.Second

// Default returns a configuration with every default set and no routes.
func Default() Config {
	return Config{
		Listen: "127.0.0.1:8080",
		TLS:    ServerTLS{ClientAuth: "none", MinVersion: "1.2"},
		Server: Server{
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       120 * time.Second,
			MaxHeaderBytes:    64 << 10,
			Memory:            DefaultMemory(),
		},
		Admin:    Admin{Listen: "127.0.0.1:9090"},
		Log:      Log{Format: "json", Level: "info"},
		Shutdown: Shutdown{DrainTimeout: 30 * time.Second},
		Replay: Replay{
			Store:      "memory",
			MaxEntries: 1_000_000,
			Redis:      Redis{KeyPrefix: "wssgw:replay:", Timeout: 200 * time.Millisecond},
		},
		XML:       DefaultXMLLimits(),
		Templates: DefaultTemplates(),
		MIME:      DefaultMIMELimits(),
		Clients:   DefaultClients(),
	}
}

// DefaultXMLLimits returns the gate's default limits.
func DefaultXMLLimits() XMLLimits {
	l := xmlscan.DefaultLimits()
	return XMLLimits{
		MaxDepth:         l.MaxDepth,
		MaxAttrs:         l.MaxAttrs,
		MaxNameLen:       l.MaxNameLen,
		MaxNSDecls:       l.MaxNSDecls,
		MaxElements:      l.MaxElements,
		MaxTextBytes:     ByteSize(l.MaxTextLen),
		MaxBase64Bytes:   ByteSize(l.MaxBase64Len),
		MaxReferences:    l.MaxReferences,
		MaxTransforms:    l.MaxTransforms,
		MaxSignatures:    l.MaxSignatures,
		MaxAttrValueLen:  ByteSize(l.MaxAttrValueLen),
		MaxEncryptedKeys: l.MaxEncryptedKeys,
		MaxEncryptedData: l.MaxEncryptedData,
	}
}

// Limits converts the configured limits for the gate; maxBytes is the
// route's body limit.
func (x XMLLimits) Limits(maxBytes ByteSize) xmlscan.Limits {
	l := xmlscan.DefaultLimits()
	l.MaxBytes = int(maxBytes)
	l.MaxDepth = x.MaxDepth
	l.MaxAttrs = x.MaxAttrs
	l.MaxNameLen = x.MaxNameLen
	l.MaxNSDecls = x.MaxNSDecls
	l.MaxElements = x.MaxElements
	l.MaxTextLen = int(x.MaxTextBytes)
	l.MaxBase64Len = int(x.MaxBase64Bytes)
	l.MaxReferences = x.MaxReferences
	l.MaxTransforms = x.MaxTransforms
	l.MaxSignatures = x.MaxSignatures
	l.MaxAttrValueLen = int(x.MaxAttrValueLen)
	l.MaxEncryptedKeys = x.MaxEncryptedKeys
	l.MaxEncryptedData = x.MaxEncryptedData
	return l
}

// DefaultRoute returns a route with every default set. A loader decodes each
// route of a file over it, so that a key set explicitly to zero stays zero
// and is reported by Validate instead of silently becoming the default.
func DefaultRoute() Route {
	return Route{
		Kind:         KindIngress,
		Egress:       DefaultEgress(),
		Policy:       PolicyNone,
		MaxBodyBytes: DefaultMaxBodyBytes,
		MaxIdleConns: DefaultMaxIdleConns,
		Timeouts: RouteTimeouts{
			Read:            DefaultReadTimeout,
			Connect:         DefaultConnectTimeout,
			Backend:         DefaultBackendTimeout,
			Idle:            DefaultIdleTimeout,
			BackendBodyIdle: DefaultBackendBodyIdle,
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
		setDefault(&r.Timeouts.BackendBodyIdle, d.Timeouts.BackendBodyIdle)
		setDefault(&r.Kind, d.Kind)
		r.Egress.applyDefaults()
	}
	dp := DefaultPolicy()
	for name, p := range c.Policies {
		if p.Require == nil {
			p.Require = dp.Require
		}
		setDefault(&p.Timestamp.MaxAge, dp.Timestamp.MaxAge)
		setDefault(&p.Timestamp.FutureSkew, dp.Timestamp.FutureSkew)
		setDefault(&p.UsernameToken.MaxAge, dp.UsernameToken.MaxAge)
		setDefault(&p.Replay, dp.Replay)
		p.Trust.OCSP.applyDefaults()
		setDefault(&p.UnsignedHeaders, dp.UnsignedHeaders)
		p.Responses.applyDefaults()
		c.Policies[name] = p
	}
}

func setDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

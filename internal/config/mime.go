package config

import (
	"os"

	"github.com/wssgw/wssgw/internal/mime"
)

// MIMELimits bound the multipart/related packages (MTOM/XOP, SwA) that
// secured routes read before verifying them. The route's maxBodyBytes
// still bounds the whole request.
type MIMELimits struct {
	// MaxParts bounds the parts of a package, the root included.
	MaxParts int `mapstructure:"maxParts"`
	// MaxHeaderBytes bounds one part's header block.
	MaxHeaderBytes ByteSize `mapstructure:"maxHeaderBytes"`
	// MaxRootSize bounds the root part (the envelope), held in memory.
	MaxRootSize ByteSize `mapstructure:"maxRootSize"`
	// MaxPartSize bounds one attachment.
	MaxPartSize ByteSize `mapstructure:"maxPartSize"`
	// MaxTotalSize bounds the whole package.
	MaxTotalSize ByteSize `mapstructure:"maxTotalSize"`
	// SpoolThreshold: larger attachments go to a spool file, smaller ones
	// stay in memory; memory per request is about maxRootSize +
	// maxParts*spoolThreshold.
	SpoolThreshold ByteSize `mapstructure:"spoolThreshold"`
	// SpoolDir is where the per-request spool directories are made; empty
	// means the system temporary directory.
	SpoolDir string `mapstructure:"spoolDir"`
}

// DefaultMIMELimits returns internal/mime's defaults.
func DefaultMIMELimits() MIMELimits {
	l := mime.DefaultLimits()
	return MIMELimits{
		MaxParts:       l.MaxParts,
		MaxHeaderBytes: ByteSize(l.MaxHeaderBytes),
		MaxRootSize:    ByteSize(l.MaxRootSize),
		MaxPartSize:    ByteSize(l.MaxPartSize),
		MaxTotalSize:   ByteSize(l.MaxTotalSize),
		SpoolThreshold: ByteSize(l.SpoolThreshold),
		SpoolDir:       l.SpoolDir,
	}
}

// Limits converts the configured limits for mime.Read.
func (m MIMELimits) Limits() mime.Limits {
	return mime.Limits{
		MaxParts:       m.MaxParts,
		MaxHeaderBytes: int(m.MaxHeaderBytes),
		MaxRootSize:    int64(m.MaxRootSize),
		MaxPartSize:    int64(m.MaxPartSize),
		MaxTotalSize:   int64(m.MaxTotalSize),
		SpoolThreshold: int64(m.SpoolThreshold),
		SpoolDir:       m.SpoolDir,
	}
}

// validate checks the limits as a whole: each is positive, a part fits in
// the package, and the spool directory exists (a missing one would fail
// every large upload at run time instead of at start-up).
func (m MIMELimits) validate(ps *Problems, key string) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"maxParts", int64(m.MaxParts)}, {"maxHeaderBytes", int64(m.MaxHeaderBytes)},
		{"maxRootSize", int64(m.MaxRootSize)}, {"maxPartSize", int64(m.MaxPartSize)},
		{"maxTotalSize", int64(m.MaxTotalSize)},
	} {
		if f.v <= 0 {
			ps.add(key+"."+f.name, "must be positive, got %d", f.v)
		}
	}
	if m.SpoolThreshold < 0 {
		ps.add(key+".spoolThreshold", "must not be negative, got %d", int64(m.SpoolThreshold))
	}
	if m.MaxPartSize > m.MaxTotalSize && m.MaxTotalSize > 0 {
		ps.add(key+".maxPartSize", "must not exceed maxTotalSize (%s), got %s", m.MaxTotalSize, m.MaxPartSize)
	}
	if m.MaxRootSize > m.MaxTotalSize && m.MaxTotalSize > 0 {
		ps.add(key+".maxRootSize", "must not exceed maxTotalSize (%s), got %s", m.MaxTotalSize, m.MaxRootSize)
	}
	if m.SpoolDir != "" {
		if fi, err := os.Stat(m.SpoolDir); err != nil || !fi.IsDir() {
			ps.add(key+".spoolDir", "must be an existing directory, got %q", m.SpoolDir)
		}
	}
}

package mime

import "fmt"

// Limits bound what Read and PartReader accept. Every field must be
// positive except SpoolDir.
type Limits struct {
	MaxParts       int   // parts, the root included
	MaxHeaderBytes int   // bytes of one part's header block (and of the preamble)
	MaxRootSize    int64 // the root part, which is held in memory
	MaxPartSize    int64 // one attachment
	MaxTotalSize   int64 // the whole package as read from the wire
	// SpoolThreshold: attachments larger than this go to a spool file;
	// smaller ones stay in memory. Memory use of Read is therefore at most
	// about MaxRootSize + MaxParts*SpoolThreshold plus a 64 KiB buffer.
	SpoolThreshold int64
	// SpoolDir is the parent of the private per-package spool directory;
	// "" means os.TempDir().
	SpoolDir string
}

// DefaultLimits fit a 1 GiB attachment with a 16 MiB envelope while holding
// at most about 24 MiB in memory.
func DefaultLimits() Limits {
	return Limits{
		MaxParts:       32,
		MaxHeaderBytes: 8 << 10,
		MaxRootSize:    16 << 20,
		MaxPartSize:    1 << 30,
		MaxTotalSize:   1<<30 + 32<<20,
		SpoolThreshold: 256 << 10,
	}
}

func (l Limits) validate() error {
	if l.MaxParts <= 0 || l.MaxHeaderBytes <= 0 || l.MaxRootSize <= 0 ||
		l.MaxPartSize <= 0 || l.MaxTotalSize <= 0 || l.SpoolThreshold < 0 {
		return fmt.Errorf("mime: invalid limits %+v", l)
	}
	return nil
}

package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wssgw/wssgw/internal/mime"
)

func TestMIMELimitsValidate(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		edit func(*MIMELimits)
		want []string
	}{
		{"ok/defaults", func(*MIMELimits) {}, nil},
		{"ok/spool dir", func(m *MIMELimits) { m.SpoolDir = dir }, nil},
		{"ok/no spooling threshold", func(m *MIMELimits) { m.SpoolThreshold = 0 }, nil},
		{"fail/zero parts", func(m *MIMELimits) { m.MaxParts = 0 }, []string{"mime.maxParts"}},
		{"fail/negative header", func(m *MIMELimits) { m.MaxHeaderBytes = -1 }, []string{"mime.maxHeaderBytes"}},
		{"fail/zero root", func(m *MIMELimits) { m.MaxRootSize = 0 }, []string{"mime.maxRootSize"}},
		{"fail/zero part", func(m *MIMELimits) { m.MaxPartSize = 0 }, []string{"mime.maxPartSize"}},
		{"fail/zero total", func(m *MIMELimits) { m.MaxTotalSize = 0 }, []string{"mime.maxTotalSize"}},
		{"fail/negative threshold", func(m *MIMELimits) { m.SpoolThreshold = -1 }, []string{"mime.spoolThreshold"}},
		{"fail/part above total", func(m *MIMELimits) { m.MaxPartSize = m.MaxTotalSize + 1 }, []string{"mime.maxPartSize"}},
		{"fail/root above total", func(m *MIMELimits) { m.MaxTotalSize = 1 << 20; m.MaxPartSize = 1 << 10 }, []string{"mime.maxRootSize"}},
		{"fail/missing spool dir", func(m *MIMELimits) { m.SpoolDir = filepath.Join(dir, "absent") }, []string{"mime.spoolDir"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.edit(&c.MIME)
			assert.Equal(t, tt.want, problemKeys(t, c))
		})
	}
}

func TestMIMELimitsConvert(t *testing.T) {
	assert.Equal(t, mime.DefaultLimits(), DefaultMIMELimits().Limits())
	m := DefaultMIMELimits()
	m.SpoolDir, m.MaxParts = "spool", 3
	l := m.Limits()
	assert.Equal(t, "spool", l.SpoolDir)
	assert.Equal(t, 3, l.MaxParts)
}

package proc

import (
	"os"
	"testing"
)

func TestStatusField(t *testing.T) {
	status := []byte("Name:\twssgw\nVmHWM:\t   20480 kB\nVmRSS:\t    1024 kB\n")
	tests := map[string]struct {
		field string
		want  int64
		fail  bool
	}{
		"ok/VmHWM":         {field: "VmHWM", want: 20 << 20},
		"ok/VmRSS":         {field: "VmRSS", want: 1 << 20},
		"fail/no-field":    {field: "VmPeak", fail: true},
		"fail/prefix-only": {field: "Vm", fail: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := statusField(status, tt.field, 1)
			if (err != nil) != tt.fail || got != tt.want {
				t.Fatalf("statusField(%s) = %d, %v", tt.field, got, err)
			}
		})
	}
}

// TestStatus reads this process's own peak RSS (Linux only).
func TestStatus(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc here")
	}
	got, err := Status(os.Getpid(), "VmHWM")
	if err != nil || got <= 0 {
		t.Fatalf("Status = %d, %v", got, err)
	}
}

func TestJSONField(t *testing.T) {
	line := `{"time":"x","msg":"listening","data":"127.0.0.1:8080","admin":"127.0.0.1:9090"}`
	if got := jsonField(line, "admin"); got != "127.0.0.1:9090" {
		t.Fatalf("admin = %q", got)
	}
	if got := jsonField(line, "none"); got != "" {
		t.Fatalf("none = %q", got)
	}
}

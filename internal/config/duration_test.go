package config

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDurationHook(t *testing.T) {
	tests := map[string]struct {
		in   any
		want time.Duration
		err  string
	}{
		"ok/seconds":           {in: "30s", want: 30 * time.Second},
		"ok/compound":          {in: "1m30s", want: 90 * time.Second},
		"ok/millis":            {in: "500ms", want: 500 * time.Millisecond},
		"ok/spaces-trimmed":    {in: " 2m ", want: 2 * time.Minute},
		"ok/zero-int":          {in: 0, want: 0},
		"ok/zero-string":       {in: "0", want: 0},
		"ok/zero-float":        {in: 0.0, want: 0},
		"ok/zero-with-unit":    {in: "0s", want: 0},
		"ok/already-duration":  {in: 5 * time.Second, want: 5 * time.Second},
		"fail/int":             {in: 5, err: "duration 5 needs a unit such as 5s"},
		"fail/negative-int":    {in: -5, err: "duration -5 needs a unit such as 5s"},
		"fail/float":           {in: 1.5, err: "duration 1.5 needs a unit such as 5s"},
		"fail/string-number":   {in: "30", err: "duration 30 needs a unit such as 5s"},
		"fail/unknown-unit":    {in: "3x", err: `invalid duration "3x"`},
		"fail/space-in-middle": {in: "5 s", err: `invalid duration "5 s"`},
		"fail/empty":           {in: "", err: `invalid duration ""`},
		"fail/bool":            {in: true, err: "invalid duration true (bool)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := DurationHook(reflect.TypeOf(tc.in), durationType, tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestDurationHookLeavesOtherTypes(t *testing.T) {
	got, err := DurationHook(reflect.TypeOf(5), reflect.TypeOf(0), 5)
	require.NoError(t, err)
	assert.Equal(t, 5, got)
}

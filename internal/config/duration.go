package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

var durationType = reflect.TypeOf(time.Duration(0))

// ValueError is a value that cannot be decoded into its key. Its message
// echoes the value; the decoder adds the key path.
type ValueError struct{ Msg string }

func (e *ValueError) Error() string { return e.Msg }

// DurationHook is a mapstructure decode hook for time.Duration fields. A
// duration must carry a unit (500ms, 30s, 2m): a bare number such as
// `backend: 5` would otherwise mean 5 nanoseconds. A bare 0 is accepted,
// as zero is zero in any unit (0 = "none" where a key allows it).
func DurationHook(_ reflect.Type, to reflect.Type, data any) (any, error) {
	if to != durationType {
		return data, nil
	}
	switch x := data.(type) {
	case time.Duration:
		return x, nil
	case string:
		s := strings.TrimSpace(x)
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			if f == 0 {
				return time.Duration(0), nil
			}
			return nil, unitless(s)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, &ValueError{Msg: fmt.Sprintf("invalid duration %q: write a number with a unit such as 500ms, 30s or 2m", x)}
		}
		return d, nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		v := reflect.ValueOf(x)
		if v.IsZero() {
			return time.Duration(0), nil
		}
		return nil, unitless(fmt.Sprint(x))
	}
	return nil, &ValueError{Msg: fmt.Sprintf("invalid duration %v (%T): write a number with a unit such as 500ms, 30s or 2m", data, data)}
}

func unitless(s string) error {
	return &ValueError{Msg: fmt.Sprintf("duration %s needs a unit such as 5s (500ms, 30s, 2m; a bare number would be nanoseconds)", s)}
}

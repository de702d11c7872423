package config

import (
	"reflect"
	"slices"
	"strings"
)

// Files lists every file the configuration names (the values of keys
// ending in File or Files), each once, sorted. A configuration reload
// watches them besides the configuration file itself, so that a rotated
// listener certificate or credentials file is taken up like a changed key
// (issue 16).
func (c *Config) Files() []string {
	var out []string
	collectFiles(reflect.ValueOf(c).Elem(), &out)
	slices.Sort(out)
	return slices.Compact(out)
}

func collectFiles(v reflect.Value, out *[]string) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := v.Field(i)
			tag := t.Field(i).Tag.Get("mapstructure")
			switch {
			case f.Kind() == reflect.String && strings.HasSuffix(tag, "File"):
				if f.String() != "" {
					*out = append(*out, f.String())
				}
			case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String && strings.HasSuffix(tag, "Files"):
				for j := range f.Len() {
					*out = append(*out, f.Index(j).String())
				}
			default:
				collectFiles(f, out)
			}
		}
	case reflect.Slice:
		for j := range v.Len() {
			collectFiles(v.Index(j), out)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			collectFiles(v.MapIndex(k), out)
		}
	}
}

package config

import (
	"path/filepath"
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
	eachFile(reflect.ValueOf(c).Elem(), func(f string) string {
		if f != "" {
			out = append(out, f)
		}
		return f
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// ResolveFiles makes the relative file names of the configuration (the
// same keys as Files) relative to dir, the directory of the config file,
// so that a configuration means the same whatever the working directory
// (a mounted ConfigMap beside its Secrets, or make run from the
// repository).
func (c *Config) ResolveFiles(dir string) {
	eachFile(reflect.ValueOf(c).Elem(), func(f string) string {
		if f == "" || filepath.IsAbs(f) {
			return f
		}
		return filepath.Join(dir, f)
	})
}

// eachFile calls fn with every file name in v, a key ending in File or
// Files at any depth, and stores what fn returns where it differs (so
// that Files, which changes nothing, writes nothing). It reports whether
// it changed v.
func eachFile(v reflect.Value, fn func(string) string) bool {
	changed := false
	set := func(s reflect.Value) {
		if n := fn(s.String()); n != s.String() {
			s.SetString(n)
			changed = true
		}
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := v.Field(i)
			tag := t.Field(i).Tag.Get("mapstructure")
			switch {
			case f.Kind() == reflect.String && strings.HasSuffix(tag, "File"):
				set(f)
			case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String && strings.HasSuffix(tag, "Files"):
				for j := range f.Len() {
					set(f.Index(j))
				}
			default:
				changed = eachFile(f, fn) || changed
			}
		}
	case reflect.Slice:
		for j := range v.Len() {
			changed = eachFile(v.Index(j), fn) || changed
		}
	case reflect.Map:
		// Map elements are not addressable: change a copy, store it back.
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			if eachFile(e, fn) {
				v.SetMapIndex(k, e)
				changed = true
			}
		}
	}
	return changed
}

package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/wssgw/wssgw/internal/config"
)

// envPrefix prefixes environment overrides: WSSGW_LISTEN,
// WSSGW_ADMIN_LISTEN, WSSGW_LOG_LEVEL, WSSGW_SHUTDOWN_DRAINTIMEOUT, ...
const envPrefix = "WSSGW"

// flagKeys binds command-line flags to config keys; flags win over the
// environment, which wins over the file.
var flagKeys = map[string]string{
	"listen":       "listen",
	"admin-listen": "admin.listen",
	"log-level":    "log.level",
	"log-format":   "log.format",
}

// loadConfig reads the file, applies environment and flag overrides, decodes
// strictly and validates. The error is config.Problems when the
// configuration is wrong (every problem, unknown keys included), or a plain
// error when the file cannot be read at all.
func loadConfig(file string, flags *pflag.FlagSet) (*config.Config, error) {
	v := viper.New()
	v.SetConfigFile(file)
	v.SetConfigType("yaml")
	v.SetEnvPrefix(envPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	cfg := config.Default()
	// Viper only consults the environment for keys it knows, so every
	// top-level key is registered with its default.
	setDefaults(v, "", reflect.ValueOf(cfg))
	if err := bindFlags(v, flags); err != nil {
		return nil, err
	}
	if err := v.ReadInConfig(); err != nil {
		return nil, fmt.Errorf("reading config %s: %w", file, err)
	}
	decodeErr := v.Unmarshal(&cfg, func(dc *mapstructure.DecoderConfig) {
		dc.DecodeHook = mapstructure.ComposeDecodeHookFunc(
			routeDefaultsHook,
			policyDefaultsHook,
			mapstructure.TextUnmarshallerHookFunc(),
			mapstructure.StringToTimeDurationHookFunc(),
		)
	})
	resolvePaths(filepath.Dir(file), reflect.ValueOf(&cfg).Elem())
	ps := decodeProblems(decodeErr)
	ps = append(ps, unknownKeys("", v.AllSettings(), reflect.TypeOf(cfg))...)
	ps = mergeProblems(ps, cfg.Validate())
	return &cfg, ps.Err()
}

// loadClientConfig loads a configuration for the client-side tools (sign,
// verify): they use its policies and limits only, so a configuration
// without routes, which the gateway refuses, is fine for them.
func loadClientConfig(file string, flags *pflag.FlagSet) (*config.Config, error) {
	cfg, err := loadConfig(file, flags)
	var ps config.Problems
	if !errors.As(err, &ps) {
		return cfg, err
	}
	kept := ps[:0:0]
	for _, p := range ps {
		if p.Key != "routes" { // "at least one route is required"
			kept = append(kept, p)
		}
	}
	return cfg, kept.Err()
}

func bindFlags(v *viper.Viper, flags *pflag.FlagSet) error {
	if flags == nil {
		return nil
	}
	for name, key := range flagKeys {
		if f := flags.Lookup(name); f != nil {
			if err := v.BindPFlag(key, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// setDefaults registers every scalar key of the config struct with viper.
func setDefaults(v *viper.Viper, prefix string, val reflect.Value) {
	t := val.Type()
	for i := range t.NumField() {
		key := prefix + t.Field(i).Tag.Get("mapstructure")
		f := val.Field(i)
		switch f.Kind() {
		case reflect.Struct:
			setDefaults(v, key+".", f)
		case reflect.Slice, reflect.Map:
			// Lists (routes) come from the file only.
		default:
			v.SetDefault(key, f.Interface())
		}
	}
}

var routeType = reflect.TypeOf(config.Route{})

// routeDefaultsHook lays each route of the file over config.DefaultRoute, so
// that defaults fill only the keys the file leaves out.
func routeDefaultsHook(_ reflect.Type, to reflect.Type, data any) (any, error) {
	m, ok := data.(map[string]any)
	if to != routeType || !ok {
		return data, nil
	}
	return overlay(structMap(reflect.ValueOf(config.DefaultRoute())), m), nil
}

var policyType = reflect.TypeOf(config.Policy{})

// policyDefaultsHook lays each policy of the file over config.DefaultPolicy.
func policyDefaultsHook(_ reflect.Type, to reflect.Type, data any) (any, error) {
	m, ok := data.(map[string]any)
	if to != policyType || !ok {
		return data, nil
	}
	return overlay(structMap(reflect.ValueOf(config.DefaultPolicy())), m), nil
}

// structMap turns a config struct into a map keyed like viper's settings
// (lower-case mapstructure names).
func structMap(val reflect.Value) map[string]any {
	out := map[string]any{}
	t := val.Type()
	for i := range t.NumField() {
		key := strings.ToLower(t.Field(i).Tag.Get("mapstructure"))
		if f := val.Field(i); f.Kind() == reflect.Struct {
			out[key] = structMap(f)
		} else {
			out[key] = f.Interface()
		}
	}
	return out
}

// overlay returns base with top laid over it, section by section.
func overlay(base, top map[string]any) map[string]any {
	for k, v := range top {
		bm, bok := base[k].(map[string]any)
		tm, tok := v.(map[string]any)
		if bok && tok {
			base[k] = overlay(bm, tm)
		} else {
			base[k] = v
		}
	}
	return base
}

// unknownKeys lists the keys of raw that name no field of t. It walks the
// whole tree itself because the decoder stops reporting unused keys inside
// an element that failed to decode, and every problem must be listed.
func unknownKeys(prefix string, raw map[string]any, t reflect.Type) config.Problems {
	fields := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		fields[strings.ToLower(f.Tag.Get("mapstructure"))] = f
	}
	var ps config.Problems
	for k, val := range raw {
		f, ok := fields[strings.ToLower(k)]
		if !ok {
			ps = append(ps, config.Problem{Key: prefix + k, Msg: "unknown key"})
			continue
		}
		key := prefix + f.Tag.Get("mapstructure")
		ps = append(ps, unknownIn(key, val, f.Type)...)
	}
	return ps
}

// unknownIn descends into a nested section or a list of sections.
func unknownIn(key string, val any, t reflect.Type) config.Problems {
	var ps config.Problems
	switch x := val.(type) {
	case map[string]any:
		switch {
		case t.Kind() == reflect.Struct:
			return unknownKeys(key+".", x, t)
		case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
			for name, item := range x {
				ps = append(ps, unknownIn(key+"."+name, item, t.Elem())...)
			}
		}
	case []any:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
			for i, item := range x {
				ps = append(ps, unknownIn(fmt.Sprintf("%s[%d]", key, i), item, t.Elem())...)
			}
		}
	}
	return ps
}

// decodeKey finds the key path in a decoder error line such as
// "'routes[0].timeouts.read' time: invalid duration".
var decodeKey = regexp.MustCompile(`^'([^']*)' (.*)$`)

// decodeProblems turns the decoder's error, one line per failed key, into
// problems.
func decodeProblems(err error) config.Problems {
	if err == nil {
		return nil
	}
	var ps config.Problems
	for _, line := range strings.Split(err.Error(), "\n") {
		if m := decodeKey.FindStringSubmatch(line); m != nil {
			ps = append(ps, config.Problem{Key: m[1], Msg: "invalid value: " + m[2]})
		}
	}
	if len(ps) == 0 {
		ps = append(ps, config.Problem{Key: "(file)", Msg: err.Error()})
	}
	return ps
}

// mergeProblems adds the validation problems, dropping those about a key
// that already failed to decode (its zero value would only be reported a
// second time), and sorts by key.
func mergeProblems(ps config.Problems, verr error) config.Problems {
	failed := map[string]bool{}
	for _, p := range ps {
		failed[strings.ToLower(p.Key)] = true
	}
	var vps config.Problems
	if errors.As(verr, &vps) {
		for _, p := range vps {
			if !failed[strings.ToLower(p.Key)] {
				ps = append(ps, p)
			}
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	return ps
}

// resolvePaths makes the relative file names of the configuration (every
// key ending in File or Files) relative to the directory of the config file,
// so that a configuration means the same whatever the working directory
// (a mounted ConfigMap beside its Secrets, or make run from the repository).
func resolvePaths(dir string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := v.Field(i)
			tag := t.Field(i).Tag.Get("mapstructure")
			switch {
			case f.Kind() == reflect.String && strings.HasSuffix(tag, "File"):
				f.SetString(resolvePath(dir, f.String()))
			case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String && strings.HasSuffix(tag, "Files"):
				for j := range f.Len() {
					f.Index(j).SetString(resolvePath(dir, f.Index(j).String()))
				}
			default:
				resolvePaths(dir, f)
			}
		}
	case reflect.Slice:
		for j := range v.Len() {
			resolvePaths(dir, v.Index(j))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			resolvePaths(dir, e)
			v.SetMapIndex(k, e)
		}
	}
}

func resolvePath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

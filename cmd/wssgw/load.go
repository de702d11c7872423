package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

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
			config.DurationHook,
		)
	})
	cfg.ResolveFiles(filepath.Dir(file))
	ps := decodeProblems(decodeErr)
	ps = append(ps, unknownKeys("", v.AllSettings(), reflect.TypeOf(cfg))...)
	ps = mergeProblems(ps, cfg.Validate())
	keys := fileKeys(file)
	ps = originalKeys(ps, keys)
	ps = policyNameCase(ps, keys)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	ps = append(ps, unknownEnv(os.Environ(), envNames(reflect.TypeOf(cfg)))...)
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
			msg := "unknown key"
			names := map[string]bool{}
			for _, f := range fields {
				names[f.Tag.Get("mapstructure")] = true
			}
			if near := nearestFold(k, names); near != "" {
				msg += "; did you mean " + prefix + near + "?"
			}
			ps = append(ps, config.Problem{Key: prefix + k, Msg: msg})
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

// mapKey matches the decoder's spelling of a named section,
// "policies[pv]"; problems spell it "policies.pv" like the file does. List
// indexes ("routes[0]") stay as they are.
var mapKey = regexp.MustCompile(`\[([^\]]*[^0-9\]][^\]]*)\]`)

// keyPath spells a decoder key path the way problems do.
func keyPath(name string) string { return mapKey.ReplaceAllString(name, ".$1") }

// decodeProblems turns the decoder's error, one error per failed key, into
// problems; the message echoes the value that failed.
func decodeProblems(err error) config.Problems {
	if err == nil {
		return nil
	}
	var ps config.Problems
	var walk func(error)
	walk = func(e error) {
		switch x := e.(type) {
		case *mapstructure.DecodeError:
			ps = append(ps, config.Problem{Key: keyPath(x.Name()), Msg: decodeMsg(x.Unwrap())})
		case interface{ Unwrap() []error }:
			for _, c := range x.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		}
	}
	walk(err)
	if len(ps) == 0 {
		ps = append(ps, config.Problem{Key: "(file)", Msg: err.Error()})
	}
	return ps
}

// decodeMsg says what is wrong with a value the decoder refused, echoing
// the value.
func decodeMsg(err error) string {
	var (
		ve *config.ValueError
		pe *mapstructure.ParseError
		ue *mapstructure.UnconvertibleTypeError
	)
	switch {
	case errors.As(err, &ve):
		return ve.Msg
	case errors.As(err, &pe) && pe.Expected.IsValid():
		return fmt.Sprintf("invalid value %q: want %s", fmt.Sprint(pe.Value), typeWord(pe.Expected.Type()))
	case errors.As(err, &ue) && ue.Expected.IsValid():
		return fmt.Sprintf("invalid value %v (%T): want %s", ue.Value, ue.Value, typeWord(ue.Expected.Type()))
	}
	if msg := err.Error(); strings.HasPrefix(msg, "invalid ") {
		return msg // a TextUnmarshaler's own message (sizes) names the value
	}
	return "invalid value: " + err.Error()
}

// typeWord names a config value's type for an operator.
func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a section (key: value)"
	}
	return t.String()
}

// fileKeys maps every key path of the file, lower-cased as viper keeps
// them, to its spelling in the file, so that problems name keys the way
// the operator wrote them. A file that does not parse gives no map (viper
// has reported it already).
func fileKeys(file string) map[string]string {
	out := map[string]string{}
	raw, err := os.ReadFile(file)
	if err != nil {
		return out
	}
	var doc any
	if yaml.Unmarshal(raw, &doc) != nil {
		return out
	}
	var walk func(prefix string, n any)
	walk = func(prefix string, n any) {
		switch x := n.(type) {
		case map[string]any:
			for k, v := range x {
				key := prefix + k
				out[strings.ToLower(key)] = key
				walk(key+".", v)
			}
		case []any:
			for i, v := range x {
				key := fmt.Sprintf("%s[%d]", strings.TrimSuffix(prefix, "."), i)
				out[strings.ToLower(key)] = key
				walk(key+".", v)
			}
		}
	}
	walk("", doc)
	return out
}

// originalKeys respells each problem's key as the file spells it, when the
// file has that key (viper lower-cases every key it reads).
func originalKeys(ps config.Problems, keys map[string]string) config.Problems {
	for i, p := range ps {
		if k, ok := keys[strings.ToLower(p.Key)]; ok {
			ps[i].Key = k
		}
	}
	return ps
}

// policyNameCase reports policy names that are not lower-case. Viper
// lower-cases every key, so a policy written PartnerA is known as partnera
// and passes the name check, while a route naming PartnerA finds no policy:
// that is one mistake, reported once, on the policy's name.
func policyNameCase(ps config.Problems, keys map[string]string) config.Problems {
	named := map[string]bool{}
	for _, p := range ps {
		named[p.Key] = true
	}
	bad := map[string]bool{}
	for _, orig := range keys {
		name, ok := strings.CutPrefix(orig, "policies.")
		if !ok || strings.Contains(name, ".") || name == strings.ToLower(name) {
			continue
		}
		bad[name] = true
		if !named[orig] {
			ps = append(ps, config.Problem{Key: orig, Msg: fmt.Sprintf("policy names must be 1-64 characters of a-z, 0-9, '-' and '_', got %q", name)})
		}
	}
	kept := ps[:0]
	for _, p := range ps {
		if name, ok := unknownPolicy(p); ok && bad[name] {
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

// unknownPolicy returns the policy a route's "unknown policy" problem names.
func unknownPolicy(p config.Problem) (string, bool) {
	if !strings.HasSuffix(p.Key, ".policy") {
		return "", false
	}
	var name string
	if _, err := fmt.Sscanf(p.Msg, "unknown policy %q", &name); err != nil {
		return "", false
	}
	return name, true
}

// envNames lists the environment variable of every scalar config key:
// WSSGW_ + the key path upper-cased with '.' as '_'.
func envNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			key := prefix + strings.ToUpper(f.Tag.Get("mapstructure"))
			switch f.Type.Kind() {
			case reflect.Struct:
				walk(key+"_", f.Type)
			case reflect.Slice, reflect.Map:
				// Lists and named sections come from the file only.
			default:
				out[key] = true
			}
		}
	}
	walk(envPrefix+"_", t)
	return out
}

// serviceLink matches the variables Kubernetes sets for each Service of the
// namespace when enableServiceLinks is on (the chart turns it off): a
// Service named wssgw or wssgw-admin gives WSSGW_SERVICE_HOST,
// WSSGW_PORT_8080_TCP_ADDR, WSSGW_ADMIN_SERVICE_PORT... They are not
// config keys and must not stop the gateway.
var serviceLink = regexp.MustCompile(`^` + envPrefix + `(_[A-Z0-9_]+)?_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_[0-9]+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)$`)

// unknownEnv reports every WSSGW_* variable that names no config key: a
// misspelt override would otherwise be ignored without a word.
func unknownEnv(environ []string, known map[string]bool) config.Problems {
	var ps config.Problems
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix+"_") || known[name] || serviceLink.MatchString(name) {
			continue
		}
		msg := fmt.Sprintf("unknown environment variable (value %q)", val)
		if near := nearest(name, known); near != "" {
			msg += "; did you mean " + near + "?"
		}
		ps = append(ps, config.Problem{Key: name, Msg: msg})
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	return ps
}

// nearest returns the known name closest to name by edit distance, or ""
// when none is close enough to be a likely typo.
func nearest(name string, known map[string]bool) string {
	best, bestD := "", len(name)/2+1
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// nearestFold is nearest for keys, which viper compares without case.
func nearestFold(name string, known map[string]bool) string {
	folded := map[string]string{}
	lower := map[string]bool{}
	for k := range known {
		folded[strings.ToLower(k)] = k
		lower[strings.ToLower(k)] = true
	}
	return folded[nearest(strings.ToLower(name), lower)]
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// mergeProblems adds the validation problems, dropping follow-on errors:
// those about a key that already failed to decode (its zero value would
// only be reported a second time) and route references to policies that
// failed to decode. It sorts by key.
func mergeProblems(ps config.Problems, verr error) config.Problems {
	failed := map[string]bool{}
	policyFailed := false
	for _, p := range ps {
		failed[strings.ToLower(p.Key)] = true
		policyFailed = policyFailed || strings.HasPrefix(p.Key, "policies.")
	}
	var vps config.Problems
	if errors.As(verr, &vps) {
		for _, p := range vps {
			// A policy that failed to decode leaves the policies out, so
			// every route naming one would also be "unknown policy".
			followOn := policyFailed && strings.HasSuffix(p.Key, ".policy") && strings.HasPrefix(p.Msg, "unknown policy")
			if !failed[strings.ToLower(p.Key)] && !followOn {
				ps = append(ps, p)
			}
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	return ps
}

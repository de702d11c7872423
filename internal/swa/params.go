package swa

import (
	"sort"
	"strings"
)

// caseless are the parameters whose values are lower-cased (§5.4.1 step
// 10).
var caseless = map[string]bool{"charset": true, "creation-date": true, "filename": true,
	"modification-date": true, "padding": true, "read-date": true, "size": true, "type": true}

// decodeParams canonicalizes a Content-Type or Content-Disposition value
// (§5.4.1 steps 10-11) as WSS4J's decodeRfc2184: without ';' the value is
// kept as is; otherwise the type is lower-cased, parameter names
// lower-cased and sorted, values quoted, written "type;name=value..."
// without spaces.
func decodeParams(v string) (string, error) {
	if !strings.Contains(v, ";") {
		return v, nil
	}
	parts := strings.Split(v, ";")
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1] // Java's String.split drops trailing empties
	}
	params := map[string]string{}
	for _, p := range parts[1:] {
		name, val, ok := strings.Cut(p, "=")
		name, val = strings.ToLower(javaTrim(name)), javaTrim(val)
		if !ok || val == "" || strings.Contains(name, "*") {
			return "", ErrHeader
		}
		if caseless[name] {
			val = strings.ToLower(val)
		}
		params[name] = unquoteInner(quote(val))
	}
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(strings.ToLower(parts[0]))
	for _, n := range names {
		b.WriteString(";" + n + "=" + params[n])
	}
	return b.String(), nil
}

// javaTrim is Java's String.trim: it strips every byte <= ' '.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// quote wraps v in double quotes, completing a quote at either end.
func quote(v string) string {
	start, end := v[0] == '"', v[len(v)-1] == '"'
	switch {
	case start && end:
		return v
	case !start && !end:
		return `"` + v + `"`
	case !start:
		return `"` + v
	}
	return v + `"`
}

// unquoteInner escapes the double quotes inside a quoted value and drops
// backslashes that escape anything else, keeping the enclosing quotes: a
// byte-level port of WSS4J's unquoteInnerText.
func unquoteInner(t string) string {
	var b strings.Builder
	n := len(t)
	for i := 0; i < n-1; i++ {
		c, c1 := t[i], t[i+1]
		switch {
		case i == 0 && c == '"':
			b.WriteByte(c)
		case c == '\\' && (c1 == '"' || c1 == '\\'):
			if i != 0 && i != n-2 {
				b.WriteByte(c)
			}
			b.WriteByte(c1)
			i++
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteByte(c1)
			i++
		default:
			b.WriteByte(c)
			if i == n-2 && c1 == '"' {
				b.WriteByte(c1)
			}
		}
	}
	return b.String()
}

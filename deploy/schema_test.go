// Package deploy holds tests of the Kubernetes delivery: the chart's values
// schema against the gateway's configuration, and the dashboard's and the
// alerts' metric names against the binary's /metrics.
package deploy

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/config"
)

var update = flag.Bool("update", false, "rewrite the config part of the chart's values.schema.json")

const schemaFile = "helm/wssgw/values.schema.json"

// chartOwned are config keys the chart sets itself (from .Values.ports);
// the schema rejects them under config.
var chartOwned = map[string]bool{"listen": true, "admin.listen": true}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	byteSizeType = reflect.TypeOf(config.ByteSize(0))
)

// configSchema is the JSON schema of a config type: every section closed
// (additionalProperties false), as wssgw itself rejects unknown keys.
func configSchema(t reflect.Type, path string) map[string]any {
	switch t {
	case durationType:
		return map[string]any{"type": "string", "pattern": `^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`}
	case byteSizeType:
		return map[string]any{"type": []any{"integer", "string"}, "minimum": 0, "pattern": `^ *[0-9]+ *(B|KiB|MiB|GiB)? *$`}
	}
	switch t.Kind() {
	case reflect.Struct:
		props := map[string]any{}
		for i := range t.NumField() {
			key := t.Field(i).Tag.Get("mapstructure")
			p := key
			if path != "" {
				p = path + "." + key
			}
			if key == "" || chartOwned[p] {
				continue
			}
			props[key] = configSchema(t.Field(i).Type, p)
		}
		return map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": configSchema(t.Elem(), path+"[]")}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": configSchema(t.Elem(), path+".*")}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	}
	return map[string]any{}
}

func wantConfigSchema() map[string]any {
	s := configSchema(reflect.TypeOf(config.Config{}), "")
	s["description"] = "The wssgw configuration (config.example.yaml) without listen and admin.listen, " +
		"which the chart sets from ports. Generated from internal/config by go test ./deploy -update."
	s["required"] = []any{"routes"}
	return s
}

// TestValuesSchemaMatchesConfig keeps the chart's schema for .Values.config
// in step with the gateway's configuration: a key wssgw accepts must not be
// rejected by helm, and a key it rejects must not pass helm.
func TestValuesSchemaMatchesConfig(t *testing.T) {
	raw, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", schemaFile, err)
	}
	props := doc["properties"].(map[string]any)
	want := wantConfigSchema()
	// Compare as JSON values (numbers, lists) the way the file holds them.
	wantJSON, _ := json.Marshal(want)
	var wantDecoded any
	_ = json.Unmarshal(wantJSON, &wantDecoded)
	if reflect.DeepEqual(props["config"], wantDecoded) {
		return
	}
	if !*update {
		t.Fatalf("%s: properties.config differs from internal/config (a config key was added, renamed or removed); "+
			"run: go test ./deploy -run TestValuesSchemaMatchesConfig -update", schemaFile)
	}
	props["config"] = want
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(schemaFile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %s", schemaFile)
}

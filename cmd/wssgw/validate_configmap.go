package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// configMapKey is the data key the Helm chart renders the configuration
// under (deploy/helm/wssgw/templates/configmap.yaml).
const configMapKey = "config.yaml"

// renderedConfig is one configuration found in a Kubernetes manifest.
type renderedConfig struct {
	name string // the ConfigMap's metadata.name
	text string
}

// configMapsIn returns the configurations of every ConfigMap in a (multi-
// document) manifest, such as `helm template` output, that has key in its
// data. Other documents are skipped.
func configMapsIn(r io.Reader, key string) ([]renderedConfig, error) {
	dec := yaml.NewDecoder(r)
	var found []renderedConfig
	for {
		var doc struct {
			Kind     string                `yaml:"kind"`
			Metadata struct{ Name string } `yaml:"metadata"`
			Data     map[string]string     `yaml:"data"`
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the manifest: %w", err)
		}
		if text, ok := doc.Data[key]; ok && doc.Kind == "ConfigMap" {
			found = append(found, renderedConfig{name: doc.Metadata.Name, text: text})
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no ConfigMap with data key %q in the manifest", key)
	}
	return found, nil
}

// parseMounts reads --mount POD_DIR=LOCAL_DIR pairs.
func parseMounts(specs []string) ([][2]string, error) {
	mounts := make([][2]string, 0, len(specs))
	for _, s := range specs {
		pod, local, ok := strings.Cut(s, "=")
		if !ok || !filepath.IsAbs(pod) || local == "" {
			return nil, fmt.Errorf("--mount %q: want /pod/dir=local/dir", s)
		}
		abs, err := filepath.Abs(local)
		if err != nil {
			return nil, fmt.Errorf("--mount %q: %w", s, err)
		}
		mounts = append(mounts, [2]string{strings.TrimSuffix(pod, "/") + "/", abs + "/"})
	}
	return mounts, nil
}

// writeRendered writes a rendered configuration to dir with every pod path
// under a mount's POD_DIR pointed at its local copy, so that the files it
// names are checked too. It returns the file's name.
func writeRendered(dir string, i int, rc renderedConfig, mounts [][2]string) (string, error) {
	text := rc.text
	for _, m := range mounts {
		text = strings.ReplaceAll(text, m[0], m[1])
	}
	file := filepath.Join(dir, fmt.Sprintf("%d-%s", i, configMapKey))
	return file, os.WriteFile(file, []byte(text), 0o600)
}

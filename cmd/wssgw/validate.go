package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/wssgw/wssgw/internal/config"
)

// validateFlags are the options of `wssgw validate`.
type validateFlags struct {
	file      string
	configMap string
	mounts    []string
}

func newValidateCmd() *cobra.Command {
	var f validateFlags
	cmd := &cobra.Command{
		Use:   "validate --config FILE | --configmap MANIFEST [--mount POD_DIR=LOCAL_DIR]...",
		Short: "Check a configuration and list every problem in it",
		Long: "validate checks a configuration file, or with --configmap the configuration in\n" +
			"the " + configMapKey + " key of every ConfigMap of a Kubernetes manifest (such as\n" +
			"`helm template` output; - reads standard input), and prints every problem as\n" +
			"key.path: what is wrong. The files a configuration names are checked too: with\n" +
			"--mount /etc/wssgw/keys=./keys the paths the pod sees under /etc/wssgw/keys\n" +
			"are read from ./keys instead.",
		Example: "  wssgw validate --config config.example.yaml\n" +
			"  helm template orders deploy/helm/wssgw -f values.yaml | wssgw validate --configmap - --mount /etc/wssgw/keys=./keys",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.configMap != "" {
				if cmd.Flags().Changed("config") {
					return errors.New("validate: --config and --configmap exclude each other")
				}
				return validateConfigMaps(cmd, &f)
			}
			if len(f.mounts) > 0 {
				return errors.New("validate: --mount needs --configmap")
			}
			return validateFile(cmd, f.file, f.file)
		},
	}
	addConfigFlags(cmd, &f.file, "wssgw.yaml")
	cmd.Flags().StringVar(&f.configMap, "configmap", "", "a Kubernetes manifest (- for standard input): validate its ConfigMaps' "+configMapKey)
	cmd.Flags().StringArrayVar(&f.mounts, "mount", nil, "POD_DIR=LOCAL_DIR: read the files the configuration names under POD_DIR from LOCAL_DIR (with --configmap)")
	return cmd
}

// validateFile checks one configuration file; label names it in the output.
func validateFile(cmd *cobra.Command, file, label string) error {
	_, err := loadConfig(file, cmd.Flags())
	var ps config.Problems
	switch {
	case errors.As(err, &ps):
		for _, p := range ps {
			fmt.Fprintln(cmd.OutOrStdout(), p)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d problem(s)\n", label, len(ps))
		return exitError{}
	case err != nil:
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", label)
	return nil
}

// validateConfigMaps checks the configuration of every ConfigMap in the
// manifest and fails when any has a problem.
func validateConfigMaps(cmd *cobra.Command, f *validateFlags) error {
	mounts, err := parseMounts(f.mounts)
	if err != nil {
		return err
	}
	in := cmd.InOrStdin()
	if f.configMap != "-" {
		file, err := os.Open(f.configMap)
		if err != nil {
			return fmt.Errorf("validate: %w", err)
		}
		defer file.Close()
		in = file
	}
	rcs, err := configMapsIn(io.LimitReader(in, 64<<20), configMapKey)
	if err != nil {
		return fmt.Errorf("validate: %s: %w", f.configMap, err)
	}
	dir, err := os.MkdirTemp("", "wssgw-validate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var failed error
	for i, rc := range rcs {
		file, err := writeRendered(dir, i, rc, mounts)
		if err != nil {
			return err
		}
		label := "ConfigMap " + rc.name + " " + configMapKey
		if err := validateFile(cmd, file, label); err != nil {
			if !errors.As(err, &exitError{}) {
				return err
			}
			failed = err
		}
	}
	return failed
}

// addConfigFlags adds --config and the flags that override config keys.
func addConfigFlags(cmd *cobra.Command, file *string, defaultFile string) {
	f := cmd.Flags()
	f.StringVarP(file, "config", "c", defaultFile, "configuration file (YAML)")
	f.String("listen", "", "data-plane listen address (overrides listen)")
	f.String("admin-listen", "", "admin listen address (overrides admin.listen)")
	f.String("log-level", "", "debug, info, warn or error (overrides log.level)")
	f.String("log-format", "", "json or text (overrides log.format)")
}

package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wssgw/wssgw/internal/config"
)

func newValidateCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "validate --config FILE",
		Short: "Check a configuration and list every problem in it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := loadConfig(file, cmd.Flags())
			var ps config.Problems
			switch {
			case errors.As(err, &ps):
				for _, p := range ps {
					fmt.Fprintln(cmd.OutOrStdout(), p)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d problem(s)\n", file, len(ps))
				return exitError{}
			case err != nil:
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", file)
			return nil
		},
	}
	addConfigFlags(cmd, &file, "wssgw.yaml")
	return cmd
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

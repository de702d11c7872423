// Command wssgw is a WS-Security reverse proxy for SOAP services. This
// package only wires: it loads the configuration (viper stays here), builds
// the internal packages and runs them.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		if _, quiet := err.(exitError); !quiet {
			fmt.Fprintln(os.Stderr, "wssgw:", err)
		}
		os.Exit(1)
	}
}

// exitError ends the process with status 1 after the command has already
// reported why.
type exitError struct{}

func (exitError) Error() string { return "exit status 1" }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "wssgw",
		Short:         "WS-Security reverse proxy for SOAP services",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCmd(), newDemoCmd(), newValidateCmd(), newVersionCmd())
	root.AddCommand(newSignCmd(), newVerifyCmd(), newTemplatesCmd())
	return root
}

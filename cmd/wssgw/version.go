package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/wssgw/wssgw/internal/metrics"
)

// Set by the build: go build -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = "unknown"
)

func buildInfo() metrics.BuildInfo { return metrics.BuildInfo{Version: version, Revision: commit} }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and Go version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "wssgw %s (commit %s, %s %s/%s)\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	}
}

package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/metrics"
)

// Set by the build: go build -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = "unknown"
)

func buildInfo() metrics.BuildInfo {
	return metrics.BuildInfo{Version: version, Revision: commit, CryptoBackend: crypto.Backend()}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit, Go version and crypto backend",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			// The backend says which build this is: the static Go one or the
			// OpenSSL one (make build-openssl), with the library's version.
			fmt.Fprintf(cmd.OutOrStdout(), "wssgw %s (commit %s, %s %s/%s, crypto %s: %s)\n", version, commit,
				runtime.Version(), runtime.GOOS, runtime.GOARCH, crypto.Backend(), crypto.BackendVersion())
		},
	}
}

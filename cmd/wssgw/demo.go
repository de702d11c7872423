package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/demo"
)

func newDemoCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "demo --config FILE",
		Short: "Run the gateway in front of an embedded demo SOAP backend",
		Long: "demo starts the embedded demo order service on the backend address of every\n" +
			"route whose backend is plain http on a loopback address, then runs the gateway\n" +
			"as serve does and prints a request to try.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(file, cmd.Flags())
			if err != nil {
				return err
			}
			stop, err := startDemoBackends(cfg)
			if err != nil {
				return err
			}
			defer stop()
			return run(cmd.Context(), cfg, func(data, admin net.Addr) {
				printDemoHelp(cmd, cfg, data, admin)
				scheme := "http"
				if cfg.TLS.Enabled() {
					return // the walkthrough's client has no CA for the data listener
				}
				go func() {
					if err := demoWalkthrough(cmd.OutOrStdout(), cfg, file, os.Args[0], scheme+"://"+data.String()); err != nil {
						fmt.Fprintln(cmd.ErrOrStderr(), "demo walkthrough:", err)
					}
				}()
			}, nil)
		},
	}
	addConfigFlags(cmd, &file, "config.example.yaml")
	return cmd
}

// startDemoBackends serves the demo backend on each distinct loopback http
// backend address of the configuration.
func startDemoBackends(cfg *config.Config) (stop func(), err error) {
	backend := &demo.Backend{}
	var servers []*http.Server
	stop = func() {
		for _, s := range servers {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = s.Shutdown(ctx)
			cancel()
		}
	}
	seen := map[string]bool{}
	for _, r := range cfg.Routes {
		u, _ := url.Parse(r.Backend)
		if u == nil || u.Scheme != "http" || seen[u.Host] || !isLoopback(u.Hostname()) {
			continue
		}
		seen[u.Host] = true
		ln, err := net.Listen("tcp", u.Host)
		if err != nil {
			stop()
			return nil, fmt.Errorf("demo backend for route %s: %w", r.Name, err)
		}
		s := &http.Server{Handler: backend, ReadHeaderTimeout: 5 * time.Second}
		servers = append(servers, s)
		go func() { _ = s.Serve(ln) }()
	}
	if len(servers) == 0 {
		return nil, errors.New("demo: no route has a loopback http backend to stand in for")
	}
	return stop, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func printDemoHelp(cmd *cobra.Command, cfg *config.Config, data, admin net.Addr) {
	scheme := "http"
	if cfg.TLS.Enabled() {
		scheme = "https"
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "\nwssgw demo: SOAP on %s://%s, metrics on http://%s/metrics (Ctrl-C stops)\n", scheme, data, admin)
	if cfg.Routes[0].Policy != config.PolicyNone {
		fmt.Fprintf(out, "Route %s requires policy %q: the plain requests below get the uniform WS-Security fault.\n", cfg.Routes[0].Name, cfg.Routes[0].Policy)
	}
	fmt.Fprintf(out, "Send a SOAP 1.1 request through the gateway:\n\n")
	fmt.Fprintf(out, "  curl -sS -H 'Content-Type: text/xml; charset=utf-8' -H 'SOAPAction: \"%s/PlaceOrder\"' \\\n", demo.NS)
	fmt.Fprintf(out, "    --data-binary @examples/orders-soap11.xml %s://%s%s\n\n", scheme, data, cfg.Routes[0].Path)
	fmt.Fprintf(out, "or SOAP 1.2:\n\n")
	fmt.Fprintf(out, "  curl -sS -H 'Content-Type: application/soap+xml; charset=utf-8' \\\n")
	fmt.Fprintf(out, "    --data-binary @examples/orders-soap12.xml %s://%s%s\n\n", scheme, data, cfg.Routes[0].Path)
}

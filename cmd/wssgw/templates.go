package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/template"
)

// newTemplatesCmd reads the learned templates of a running gateway from its
// admin listener.
func newTemplatesCmd() *cobra.Command {
	var admin string
	cmd := &cobra.Command{
		Use:   "templates",
		Short: "List or show the template automaton's learned message shapes",
		Long: "templates reads a running gateway's learned templates from its admin listener:\n" +
			"list prints one line per template, show prints one template's markup with its\n" +
			"slots written as {class}. Slot values are never exposed.",
	}
	cmd.PersistentFlags().StringVar(&admin, "admin", config.Default().Admin.Listen,
		"the gateway's admin address: host:port (http) or an http:// or https:// URL")
	// Every subcommand reads admin as a base URL.
	cmd.PersistentPreRunE = func(*cobra.Command, []string) error {
		u, err := adminBaseURL(admin)
		admin = u
		return err
	}
	list := &cobra.Command{
		Use: "list", Short: "List the learned templates", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var infos []template.Info
			if err := getJSON(admin+"/templates", &infos); err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "POLICY\tID\tSLOTS\tBYTES\tHITS\tLEARNED")
			for _, in := range infos {
				fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%s\n", in.Policy, in.ID, in.Slots, in.Bytes, in.Hits, in.LearnedAt.Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
	show := &cobra.Command{
		Use: "show ID", Short: "Show one template's shape", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var infos []template.Info
			if err := getJSON(admin+"/templates/"+url.PathEscape(args[0]), &infos); err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(infos)
		},
	}
	export := &cobra.Command{
		Use: "export", Short: "Write the learned templates as an import file (JSON) to stdout", Args: cobra.NoArgs,
		Long: "export writes, per template, the accepted message it was learned from: the file\n" +
			"holds real messages, payload included. templates.importFile or `templates import`\n" +
			"learns them again through the DOM engine.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			var entries []template.Exported
			if err := getJSON(admin+"/templates/export", &entries); err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(entries)
		},
	}
	imp := &cobra.Command{
		Use: "import FILE", Short: "Teach a running gateway the templates of an export file", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			c := &http.Client{Timeout: time.Minute}
			resp, err := c.Post(admin+"/templates/import", "application/json", f)
			if err != nil {
				return fmt.Errorf("templates: %w", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			if resp.StatusCode != http.StatusOK {
				return adminError(admin, resp, body)
			}
			_, err = cmd.OutOrStdout().Write(body)
			return err
		},
	}
	cmd.AddCommand(list, show, export, imp)
	return cmd
}

// adminBaseURL accepts the admin address as admin.listen spells it
// (host:port, plain http) or as a URL, and returns the URL without a
// trailing slash.
func adminBaseURL(s string) (string, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--admin %q: want host:port or an http(s) URL such as http://127.0.0.1:9090", s)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

func getJSON(u string, v any) error {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return fmt.Errorf("templates: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("templates: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return adminError(u, resp, body)
	}
	return json.Unmarshal(body, v)
}

// errTemplatesOff is the admin listener answering 404 for the templates
// API: the gateway runs without admin.templates: true.
var errTemplatesOff = errors.New("templates: the gateway's admin listener does not serve the templates API; " +
	"it is off by default (an export holds real partner messages): set admin.templates: true " +
	"(or WSSGW_ADMIN_TEMPLATES=true) on the gateway to enable it")

// adminError explains a failed admin request. A 404 is the templates API
// switched off, unless it is templatesHandler's own answer for an unknown
// template id.
func adminError(u string, resp *http.Response, body []byte) error {
	if resp.StatusCode == http.StatusNotFound && !strings.HasPrefix(string(body), "no template ") {
		return fmt.Errorf("%w (%s answered %s)", errTemplatesOff, u, resp.Status)
	}
	return fmt.Errorf("templates: %s: %s", resp.Status, body)
}

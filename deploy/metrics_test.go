package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/wss"
)

const (
	dashboardFile = "grafana/wssgw-overview.json"
	rulesFile     = "prometheus/wssgw.rules.yaml"
)

// exprs returns every PromQL expression of the dashboard (panel targets and
// template variable queries) and of the alert rules, by where it is.
func exprs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var walk func(where string, node any)
	walk = func(where string, node any) {
		switch n := node.(type) {
		case map[string]any:
			if title, ok := n["title"].(string); ok {
				where = where + "/" + title
			}
			if e, ok := n["expr"].(string); ok {
				out[fmt.Sprintf("%s %s", where, n["refId"])] = e
			}
			if q, ok := n["query"].(map[string]any); ok {
				if e, ok := q["query"].(string); ok {
					out[where+" variable "+fmt.Sprint(n["name"])] = e
				}
			}
			for k, v := range n {
				if k != "query" {
					walk(where, v)
				}
			}
		case []any:
			for _, v := range n {
				walk(where, v)
			}
		}
	}
	walk("dashboard", dash)

	raw, err = os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert, Record, Expr string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			out["rule "+r.Alert+r.Record] = r.Expr
		}
	}
	return out
}

var (
	metricName = regexp.MustCompile(`\bwssgw_[a-zA-Z0-9_]+`)
	// Label values and strings in selectors may contain wssgw_ too; drop
	// quoted strings first.
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// usedNames maps each wssgw metric name the expressions use to where.
func usedNames(t *testing.T) map[string][]string {
	used := map[string][]string{}
	for where, e := range exprs(t) {
		for _, n := range metricName.FindAllString(quoted.ReplaceAllString(e, `""`), -1) {
			used[n] = append(used[n], where)
		}
	}
	return used
}

// families parses the metric family names of a text exposition. Histogram
// and summary samples (_bucket, _sum, _count) count for their family too.
func families(exposition []byte) map[string]bool {
	fams := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# TYPE ") {
			f := strings.Fields(line)
			if len(f) >= 4 {
				fams[f[2]] = true
				if f[3] == "histogram" || f[3] == "summary" {
					for _, s := range []string{"_bucket", "_sum", "_count"} {
						fams[f[2]+s] = true
					}
				}
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		fams[name] = true
	}
	return fams
}

// missing lists the used names the exposition lacks, with where they are used.
func missing(used map[string][]string, fams map[string]bool) []string {
	var out []string
	for n, where := range used {
		if !fams[n] {
			sort.Strings(where)
			out = append(out, fmt.Sprintf("%s (used in %s)", n, strings.Join(where, "; ")))
		}
	}
	sort.Strings(out)
	return out
}

// scrape builds the real binary, runs it on a configuration with a secured
// route, an egress route and a TLS listener (demo keys, so that policy,
// stage, template, engine, replay store, legacy algorithm, response
// signing, egress, certificate and TLS handshake series exist), and returns its /metrics in
// the Prometheus text format.
func scrape(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "wssgw")
	build := exec.Command("go", "build", "-o", bin, "github.com/wssgw/wssgw/cmd/wssgw")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	keys, err := filepath.Abs("../examples/keys")
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`listen: 127.0.0.1:0
tls: # exports the TLS handshake failure series
  certFile: %[1]s/gateway.crt
  keyFile: %[1]s/gateway.key
  clientCAFile: %[1]s/ca.crt
  clientAuth: request
admin:
  listen: 127.0.0.1:0
log:
  format: json
routes:
  - name: orders
    path: /orders
    backend: http://127.0.0.1:9
    policy: partner-a
  - name: plain
    path: /plain
    backend: http://127.0.0.1:9
  - name: partner-out # exports the egress series
    path: /out
    backend: http://127.0.0.1:9
    kind: egress
    egress:
      sign: {certFile: %[1]s/gateway.crt, keyFile: %[1]s/gateway.key}
      response: {policy: partner-out}
policies:
  partner-out:
    trust: {caFiles: [%[1]s/ca.crt]}
  partner-a:
    require: [signature, timestamp]
    trust:
      caFiles: [%[1]s/ca.crt]
      ocsp:
        enabled: true # exports the OCSP series; no partner certificate is known, so nothing is fetched
    decryptionKeys:
      - certFile: %[1]s/gateway.crt
        keyFile: %[1]s/gateway.key
    responses: # exports the response signing series
      sign: true
      certFile: %[1]s/gateway.crt
      keyFile: %[1]s/gateway.key
`, keys)
	file := filepath.Join(dir, "wssgw.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", file)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	admin := make(chan string, 1)
	var logs bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil && l["msg"] == "listening" {
				admin <- fmt.Sprint(l["admin"])
			}
		}
	}()
	var addr string
	select {
	case addr = <-admin:
	case <-time.After(30 * time.Second):
		t.Fatalf("wssgw did not start listening within 30s")
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %v %v", resp.Status, err)
	}
	return body
}

// TestDashboardAndAlertMetricsExist: every wssgw metric the dashboard and the
// alerts query is one the gateway exports.
func TestDashboardAndAlertMetricsExist(t *testing.T) {
	used := usedNames(t)
	for _, n := range []string{"wssgw_requests_total", "wssgw_security_failures_total", "wssgw_certificate_expiry_timestamp_seconds"} {
		if len(used[n]) == 0 {
			t.Fatalf("the dashboard and alerts never use %s: the expression extraction is broken", n)
		}
	}
	exposition := scrape(t)
	fams := families(exposition)
	labels := labelNames(exposition)
	for where, e := range exprs(t) {
		for _, u := range unknownLabels(e, labels) {
			t.Errorf("%s: %s: %s", where, u, e)
		}
	}
	if m := missing(used, fams); len(m) > 0 {
		t.Errorf("metrics used by the dashboard or the alerts that the gateway does not export:\n  %s", strings.Join(m, "\n  "))
	}
	if u := undocumented(t, fams); len(u) > 0 {
		t.Errorf("metrics the gateway exports that docs/reference.md does not list: %s", strings.Join(u, " "))
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	slices.Sort(names)
	t.Logf("%d metric names checked: %s", len(names), strings.Join(names, " "))

	// The check can fail: a bogus name is reported.
	t.Run("bogus name is detected", func(t *testing.T) {
		bogus := map[string][]string{"wssgw_bogus_seconds_bucket": {"test"}, "wssgw_requests_total": {"test"}}
		m := missing(bogus, fams)
		if len(m) != 1 || !strings.HasPrefix(m[0], "wssgw_bogus_seconds_bucket ") {
			t.Fatalf("missing() = %q, want only wssgw_bogus_seconds_bucket", m)
		}
	})
}

func TestFamilies(t *testing.T) {
	exp := []byte(`# HELP wssgw_request_duration_seconds x
# TYPE wssgw_request_duration_seconds histogram
wssgw_request_duration_seconds_bucket{route="a",le="+Inf"} 1
wssgw_request_duration_seconds_sum{route="a"} 1
wssgw_request_duration_seconds_count{route="a"} 1
# TYPE wssgw_requests_total counter
wssgw_requests_total{route="a",outcome="ok"} 1
`)
	f := families(exp)
	for _, n := range []string{"wssgw_request_duration_seconds", "wssgw_request_duration_seconds_bucket", "wssgw_request_duration_seconds_count", "wssgw_requests_total"} {
		if !f[n] {
			t.Errorf("families lacks %s", n)
		}
	}
	if f["wssgw_requests"] {
		t.Error("families has wssgw_requests")
	}
}

// TestDashboard checks the dashboard's conventions: stable uid, datasource
// variable used by every panel and query, $__rate_interval in rate().
func TestDashboard(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string `json:"uid"`
		ID         any    `json:"id"`
		Title      string `json:"title"`
		Templating struct {
			List []struct{ Name, Type string } `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title      string         `json:"title"`
			Type       string         `json:"type"`
			Datasource map[string]any `json:"datasource"`
			Targets    []struct {
				Expr       string         `json:"expr"`
				Datasource map[string]any `json:"datasource"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if d.UID != "wssgw-overview" || d.ID != nil || d.Title == "" {
		t.Errorf("uid %q id %v title %q: want uid wssgw-overview, id null, a title", d.UID, d.ID, d.Title)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["datasource"] != "datasource" || vars["route"] != "query" {
		t.Errorf("template variables %v: want datasource (datasource) and route (query)", vars)
	}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource["uid"] != "${datasource}" {
			t.Errorf("panel %q: datasource %v, want uid ${datasource}", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Datasource["uid"] != "${datasource}" {
				t.Errorf("panel %q: target datasource %v", p.Title, tg.Datasource)
			}
			if strings.Contains(tg.Expr, "rate(") && !strings.Contains(tg.Expr, "[$__rate_interval]") {
				t.Errorf("panel %q: rate() without $__rate_interval: %s", p.Title, tg.Expr)
			}
		}
	}
}

// TestChartCopies: the chart ships copies of the dashboard and the rules
// (helm reads files only inside the chart); they must not drift.
func TestChartCopies(t *testing.T) {
	for src, cp := range map[string]string{
		dashboardFile: "helm/wssgw/files/wssgw-overview.json",
		rulesFile:     "helm/wssgw/files/wssgw.rules.yaml",
	} {
		a, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(cp)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from %s: cp deploy/%s deploy/%s", cp, src, src, cp)
		}
	}
}

// TestLabelValuesExist: the label values the queries match on (outcomes,
// stages, template lookup results, failure reasons) are ones the gateway
// uses, so that a renamed value cannot silently empty a panel or an alert.
func TestLabelValuesExist(t *testing.T) {
	known := map[string]map[string]bool{"outcome": {}, "stage": {}, "result": {}, "reason": {}, "engine": {}, "store": {}}
	for _, o := range metrics.Outcomes() {
		known["outcome"][o.String()] = true
	}
	for _, s := range []string{metrics.StageGate, metrics.StageMatch, metrics.StageVerify, metrics.StageDecrypt, metrics.StagePolicy, metrics.StageSign} {
		known["stage"][s] = true
	}
	// The result label of template lookups, shadow checks, response
	// signing, replay store look-ups, OCSP fetches and egress calls.
	for _, r := range slices.Concat(metrics.LookupResults(), metrics.ShadowResults(),
		metrics.ResponseResults(), metrics.ReplayResults(), metrics.OCSPFetchResults(), metrics.EgressResults()) {
		known["result"][r] = true
	}
	for _, e := range []string{metrics.EngineTemplate, metrics.EngineDOM} {
		known["engine"][e] = true
	}
	for _, s := range []string{metrics.ReplayMemory, metrics.ReplayRedis} {
		known["store"][s] = true
	}
	for _, r := range wss.Reasons() {
		known["reason"][r.String()] = true
	}
	for _, r := range metrics.TLSHandshakeReasons() {
		known["reason"][r] = true
	}
	for _, r := range metrics.SkipReasons() {
		known["reason"][r] = true
	}
	matcher := regexp.MustCompile(`\b(outcome|stage|result|reason|engine|store)\s*(=~|!~|=|!=)\s*"([^"]*)"`)
	checked := 0
	for where, e := range exprs(t) {
		for _, m := range matcher.FindAllStringSubmatch(e, -1) {
			label, op, value := m[1], m[2], m[3]
			values := []string{value}
			if op == "=~" || op == "!~" {
				if strings.ContainsAny(value, ".*+?()[]") {
					continue // a pattern, not a list of values
				}
				values = strings.Split(value, "|")
			}
			for _, v := range values {
				checked++
				if !known[label][v] {
					t.Errorf("%s: %s %s %q: %q is not a value of the %s label", where, label, op, value, v, label)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d label values checked: the matcher is broken", checked)
	}
}

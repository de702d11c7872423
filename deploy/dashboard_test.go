package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// panel is a dashboard panel as the layout and query checks see it.
type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

func panels(t *testing.T) []panel {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Panels []panel }
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d.Panels
}

// dashboardQuestions are what operators ask the dashboard (issue 16), each
// with a pattern one of its panel queries must match: a panel that answers
// it cannot be dropped or emptied by a renamed metric or label unnoticed.
var dashboardQuestions = []struct{ question, pattern string }{
	{"request rate by route and outcome", `sum by \(route, outcome\) \(rate\(wssgw_requests_total\{`},
	{"security faults by reason", `wssgw_security_failures_total\{`},
	{"latency per route", `wssgw_request_duration_seconds_bucket\{`},
	{"latency per engine (template vs DOM)", `by \([^)]*engine[^)]*\) \(rate\(wssgw_engine_duration_seconds_bucket\{`},
	{"template hit ratio where templates apply", `wssgw_template_lookups_total\{[^}]*result=~"hit\|no_template\|rejected"`},
	{"shadow disagreements", `wssgw_template_shadow_checks_total\{[^}]*result="disagree"`},
	{"shapes not learned yet (templates.learnAfter)", `wssgw_template_learn_skipped_total\{[^}]*reason="first_sight"`},
	{"legacy algorithm use per partner", `by \([^)]*signer[^)]*\) \(increase\(wssgw_legacy_algorithm_messages_total\{`},
	{"replay store look-ups and errors", `wssgw_replay_store_operations_total\{`},
	{"replay store latency (Redis)", `wssgw_replay_store_duration_seconds_bucket\{`},
	{"replay store fill", `wssgw_replay_store_entries\{[^}]*\} / wssgw_replay_store_capacity\{`},
	{"response signing results", `wssgw_response_signing_total\{`},
	{"response signing latency", `wssgw_stage_duration_seconds_bucket\{[^}]*stage="sign"`},
	{"certificate expiry", `wssgw_certificate_expiry_timestamp_seconds\{`},
	{"egress calls and rejected partner responses", `wssgw_egress_requests_total\{[^}]*result="rejected"`},
	{"OCSP status of partner certificates", `by \([^)]*status[^)]*\) \(wssgw_ocsp_certificates\{`},
	{"OCSP fetch results", `by \([^)]*result[^)]*\) \(rate\(wssgw_ocsp_fetches_total\{`},
	{"age of the oldest OCSP response", `wssgw_ocsp_oldest_response_age_seconds\{`},
}

// TestDashboardAnswersOperatorQuestions: every question has a panel.
func TestDashboardAnswersOperatorQuestions(t *testing.T) {
	var queries []string
	for where, e := range exprs(t) {
		if strings.HasPrefix(where, "dashboard/") {
			queries = append(queries, e)
		}
	}
	for _, q := range dashboardQuestions {
		re := regexp.MustCompile(q.pattern)
		found := false
		for _, e := range queries {
			found = found || re.MatchString(e)
		}
		if !found {
			t.Errorf("no dashboard query answers %q (want one matching %s)", q.question, q.pattern)
		}
	}
}

// breakdown matches a per-series breakdown of counter rates by two labels
// or more, such as sum by (route, outcome) (rate(...)): every such pair
// exists at zero from start-up, so unfiltered it draws hundreds of flat
// lines (issue 16: ~240 on the request-rate panel).
var breakdown = regexp.MustCompile(`^sum by \(\w+(?:, *\w+)+\) \((?:rate|increase)\(`)

// drawsOnlyTraffic reports whether a breakdown query keeps only series
// with traffic: compared "> 0", or cut to the top series with topk.
func drawsOnlyTraffic(expr string) bool {
	e := strings.TrimSpace(expr)
	if !breakdown.MatchString(e) {
		return true
	}
	return strings.HasSuffix(e, "> 0") || strings.HasPrefix(e, "topk(")
}

func TestDashboardDrawsOnlyTraffic(t *testing.T) {
	checked := 0
	for _, p := range panels(t) {
		if p.Type != "timeseries" {
			continue
		}
		for _, tg := range p.Targets {
			if breakdown.MatchString(tg.Expr) {
				checked++
			}
			if !drawsOnlyTraffic(tg.Expr) {
				t.Errorf("panel %q draws every series, also those at zero: add \"> 0\" or use topk: %s", p.Title, tg.Expr)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d breakdown queries found: the matcher is broken", checked)
	}
	t.Run("fail/the request-rate query of issue 16 is detected", func(t *testing.T) {
		if drawsOnlyTraffic(`sum by (route, outcome) (rate(wssgw_requests_total{namespace=~"$namespace",route=~"$route"}[$__rate_interval]))`) {
			t.Fatal("an unfiltered breakdown passed")
		}
	})
	t.Run("ok/a single-label sum needs no filter", func(t *testing.T) {
		if !drawsOnlyTraffic(`sum by (route) (rate(wssgw_sent_bytes_total[$__rate_interval]))`) {
			t.Fatal("a single-label sum was refused")
		}
	})
}

// overlaps reports whether two grid rectangles share a cell.
func overlaps(a, b panel) bool {
	ga, gb := a.GridPos, b.GridPos
	return ga.X < gb.X+gb.W && gb.X < ga.X+ga.W && ga.Y < gb.Y+gb.H && gb.Y < ga.Y+ga.H
}

// TestDashboardLayout: unique ids, panels inside the 24-column grid, rows
// full width, no two panels on the same cells. Several hands add rows (each
// at its own y), so an overlap is a merge mistake.
func TestDashboardLayout(t *testing.T) {
	ps := panels(t)
	ids := map[int]string{}
	for i, p := range ps {
		g := p.GridPos
		if prev, dup := ids[p.ID]; dup {
			t.Errorf("panel %q: id %d already used by %q", p.Title, p.ID, prev)
		}
		ids[p.ID] = p.Title
		if g.X < 0 || g.W <= 0 || g.H <= 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, g)
		}
		if p.Type == "row" && (g.X != 0 || g.W != 24 || g.H != 1) {
			t.Errorf("row %q: gridPos %+v, want x 0, w 24, h 1", p.Title, g)
		}
		for _, q := range ps[:i] {
			if overlaps(p, q) {
				t.Errorf("panels %q %+v and %q %+v overlap", p.Title, g, q.Title, q.GridPos)
			}
		}
	}
	t.Run("fail/an overlap is detected", func(t *testing.T) {
		var a, b panel
		a.GridPos.X, a.GridPos.Y, a.GridPos.W, a.GridPos.H = 0, 0, 12, 8
		b.GridPos.X, b.GridPos.Y, b.GridPos.W, b.GridPos.H = 11, 7, 4, 4
		if !overlaps(a, b) {
			t.Fatal(fmt.Sprint("no overlap found in ", a.GridPos, b.GridPos))
		}
		b.GridPos.X = 12
		if overlaps(a, b) {
			t.Fatal("side by side panels overlap")
		}
	})
}

// undocumented lists the wssgw metric families of an exposition that the
// metric table of docs/reference.md does not name (in backquotes).
func undocumented(t *testing.T, fams map[string]bool) []string {
	t.Helper()
	raw, err := os.ReadFile("../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for n := range fams {
		base := n
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(n, s); ok && fams[b] {
				base = b
			}
		}
		if base == n && strings.HasPrefix(n, "wssgw_") && !strings.Contains(string(raw), "`"+n+"`") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func TestUndocumented(t *testing.T) {
	fams := families([]byte("# TYPE wssgw_requests_total counter\nwssgw_requests_total 1\n# TYPE wssgw_bogus_seconds histogram\nwssgw_bogus_seconds_count 1\n"))
	if u := undocumented(t, fams); !slices.Equal(u, []string{"wssgw_bogus_seconds"}) {
		t.Fatalf("undocumented = %q, want only wssgw_bogus_seconds", u)
	}
}

// scrapeLabels are the labels Prometheus adds to every series it scrapes
// (the target's and the Kubernetes service discovery's): queries may use
// them on any metric.
var scrapeLabels = map[string]bool{"namespace": true, "instance": true, "job": true, "pod": true, "service": true, "container": true, "endpoint": true}

var (
	sampleLine = regexp.MustCompile(`^(wssgw_\w+)\{(.*)\} `)
	labelPair  = regexp.MustCompile(`(\w+)="(?:[^"\\]|\\.)*"`)
	selector   = regexp.MustCompile(`(wssgw_\w+)\{([^}]*)\}`)
	matcherKey = regexp.MustCompile(`(\w+)\s*(?:=~|!~|!=|=)\s*""`)
	grouping   = regexp.MustCompile(`\b(?:by|without|on|ignoring)\s*\(([^)]*)\)`)
)

// labelNames maps each wssgw series name of an exposition to the label
// names its samples carry.
func labelNames(exposition []byte) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, line := range strings.Split(string(exposition), "\n") {
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if out[m[1]] == nil {
			out[m[1]] = map[string]bool{}
		}
		for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
			out[m[1]][p[1]] = true
		}
	}
	return out
}

// unknownLabels lists the label names an expression selects or groups by
// that none of its wssgw metrics has: a query on a label the metric lacks
// matches nothing, and a grouping by one draws a single unlabelled line.
func unknownLabels(expr string, labels map[string]map[string]bool) []string {
	e := quoted.ReplaceAllString(expr, `""`)
	var out []string
	anyHas := map[string]bool{}
	for _, n := range metricName.FindAllString(e, -1) {
		for l := range labels[n] {
			anyHas[l] = true
		}
	}
	for _, s := range selector.FindAllStringSubmatch(e, -1) {
		have := labels[s[1]]
		for _, m := range matcherKey.FindAllStringSubmatch(s[2], -1) {
			if !have[m[1]] && !scrapeLabels[m[1]] {
				out = append(out, s[1]+" has no label "+m[1])
			}
		}
	}
	for _, g := range grouping.FindAllStringSubmatch(e, -1) {
		for _, l := range strings.Split(g[1], ",") {
			l = strings.TrimSpace(l)
			if l != "" && !anyHas[l] && !scrapeLabels[l] {
				out = append(out, "no metric of the query has the label "+l)
			}
		}
	}
	return out
}

func TestUnknownLabels(t *testing.T) {
	labels := labelNames([]byte(`wssgw_replay_store_entries{store="memory"} 0
wssgw_requests_total{outcome="ok",route="a"} 1
wssgw_x_bucket{le="+Inf",route="a=\"b\""} 1
`))
	for _, tc := range []struct {
		name, expr string
		want       int
	}{
		{"ok/selector and grouping", `sum by (route, outcome) (rate(wssgw_requests_total{namespace=~"$namespace",route=~"$route"}[5m])) > 0`, 0},
		{"ok/histogram le", `histogram_quantile(0.5, sum by (le, route) (rate(wssgw_x_bucket{route="x"}[5m])))`, 0},
		{"fail/selector on a missing label", `wssgw_replay_store_entries{policy=~"$policy"}`, 1},
		{"fail/grouping by a missing label", `sum by (policy) (wssgw_replay_store_entries)`, 1},
		{"ok/grouping of a bare name", `max by (store) (wssgw_replay_store_entries)`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unknownLabels(tc.expr, labels); len(got) != tc.want {
				t.Fatalf("unknownLabels = %q, want %d", got, tc.want)
			}
		})
	}
}

package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wssgw/wssgw/internal/metrics"
)

// lookups are wssgw_template_lookups_total of one route, by result.
type lookups map[string]float64

// scrape reads wssgw's admin /metrics: the template lookups of route by
// result, and the templates its policy holds. Diffs of two scrapes are
// what a scenario did (issue 14: the hit ratio of each scenario).
func scrape(admin, route, policy string) (lookups, float64, error) {
	l := lookups{}
	var held float64
	routeLabel := fmt.Sprintf(`%s=%q`, metrics.LabelRoute, route)
	policyLabel := fmt.Sprintf(`%s=%q`, metrics.LabelPolicy, policy)
	err := eachSample(admin, func(line string, v float64) {
		switch {
		case strings.HasPrefix(line, metrics.NameTemplateLookups+"{") && strings.Contains(line, routeLabel):
			l[labelValue(line, metrics.LabelResult)] += v
		case strings.HasPrefix(line, metrics.NameTemplates+"{") && strings.Contains(line, policyLabel):
			held = v
		}
	})
	return l, held, err
}

// sheds are wssgw_overload_rejections_total of one route by reason: the
// requests wssgw answered 503 without a verdict.
type sheds map[string]float64

// shedReasons are the reasons the fresh-shape scenario always prints, 0
// when absent: the DOM engine's share and queue, and the first-sight
// lanes (issue 14).
var shedReasons = []string{metrics.OverloadShare, metrics.OverloadQueue, metrics.OverloadFirstSight}

// scrapeSheds reads wssgw's overload rejections of each of routes, by
// reason.
func scrapeSheds(admin string, routes ...string) (map[string]sheds, error) {
	out := map[string]sheds{}
	for _, r := range routes {
		out[r] = sheds{}
	}
	err := eachSample(admin, func(line string, v float64) {
		if !strings.HasPrefix(line, metrics.NameOverloadRejections+"{") {
			return
		}
		if s, ok := out[labelValue(line, metrics.LabelRoute)]; ok {
			s[labelValue(line, metrics.LabelReason)] += v
		}
	})
	return out, err
}

// add adds the difference after-before to s.
func (s sheds) add(before, after sheds) {
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			s[k] += d
		}
	}
}

// String is "dom_share 12, dom_queue 0, first_sight 30": shedReasons
// first, then any other reason seen, sorted.
func (s sheds) String() string {
	var parts []string
	for _, r := range shedReasons {
		parts = append(parts, fmt.Sprintf("%s %.0f", r, s[r]))
	}
	var other []string
	for r := range s {
		if !slices.Contains(shedReasons, r) {
			other = append(other, r)
		}
	}
	sort.Strings(other)
	for _, r := range other {
		parts = append(parts, fmt.Sprintf("%s %.0f", r, s[r]))
	}
	return strings.Join(parts, ", ")
}

// eachSample calls f with each sample line of wssgw's admin /metrics and
// its value (comments skipped).
func eachSample(admin string, f func(line string, v float64)) error {
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return fmt.Errorf("metrics line %q: no value", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return fmt.Errorf("metrics line %q: %w", line, err)
		}
		f(line, v)
	}
	return sc.Err()
}

// labelValue is the value of label in a Prometheus text-format line.
func labelValue(line, label string) string {
	i := strings.Index(line, label+`="`)
	if i < 0 {
		return ""
	}
	v := line[i+len(label)+2:]
	return v[:strings.IndexByte(v, '"')]
}

// add adds the difference after-before to l.
func (l lookups) add(before, after lookups) {
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			l[k] += d
		}
	}
}

func (l lookups) total() float64 {
	var t float64
	for _, v := range l {
		t += v
	}
	return t
}

// String is "hit ratio 0.912 (hit 912, no_template 88)", results sorted.
func (l lookups) String() string {
	t := l.total()
	if t == 0 {
		return "no template lookups"
	}
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.0f", k, l[k])
	}
	return fmt.Sprintf("hit ratio %.3f (%s)", l[metrics.LookupHit]/t, strings.Join(parts, ", "))
}

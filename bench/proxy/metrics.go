package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
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
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	l := lookups{}
	var held float64
	routeLabel := fmt.Sprintf(`%s=%q`, metrics.LabelRoute, route)
	policyLabel := fmt.Sprintf(`%s=%q`, metrics.LabelPolicy, policy)
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		lookup := strings.HasPrefix(line, metrics.NameTemplateLookups+"{") && strings.Contains(line, routeLabel)
		count := strings.HasPrefix(line, metrics.NameTemplates+"{") && strings.Contains(line, policyLabel)
		if !lookup && !count {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return nil, 0, fmt.Errorf("metrics line %q: %w", line, err)
		}
		if count {
			held = v
			continue
		}
		l[labelValue(line, metrics.LabelResult)] += v
	}
	return l, held, sc.Err()
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

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpeer"
	"github.com/wssgw/wssgw/test/attack"
)

// routeBodyLimit is securedConfig's maxBodyBytes on /signed and /encrypted.
const routeBodyLimit = 4 << 20

// attackBase is one message WSS4J secures for the attack suite.
type attackBase struct {
	name, profile, version, route string
	file                          string
}

// attackClient sends the suite's requests; a request that hangs fails the
// test instead of blocking it.
var attackClient = &http.Client{Timeout: 2 * time.Minute}

// attackResponse is what the gateway answered to one request.
type attackResponse struct {
	id     string
	status int
	header http.Header
	body   []byte
}

// sendAttack posts data to route with the correlation id id, so that the
// gateway's log line for it can be found.
func sendAttack(t *testing.T, gw *gateway, route, version, id string, data []byte) attackResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, gw.data+route, bytes.NewReader(data))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType(version))
	req.Header.Set("X-Request-Id", id)
	resp, err := attackClient.Do(req)
	require.NoError(t, err, "%s: request failed", id)
	body := readAll(t, resp)
	return attackResponse{id: id, status: resp.StatusCode, header: resp.Header, body: body}
}

// asResponse rebuilds an *http.Response for requireSecurityFault.
func (r attackResponse) asResponse() *http.Response {
	return &http.Response{StatusCode: r.status, Header: r.header, Body: io.NopCloser(bytes.NewReader(r.body))}
}

// correlationID matches the correlation id in a fault's detail, as
// soap.Fault renders it.
var correlationID = regexp.MustCompile(`(<gw:correlationId xmlns:gw="` + regexp.QuoteMeta(soap.DetailNS) + `">)([^<]*)(</gw:correlationId>)`)

// withoutCorrelationID returns a fault body with the correlation id value
// removed, and the id.
func withoutCorrelationID(body []byte) (string, string) {
	m := correlationID.FindSubmatch(body)
	if m == nil {
		return string(body), ""
	}
	return correlationID.ReplaceAllString(string(body), "${1}${3}"), string(m[2])
}

// logReason is the WS-Security reason of a request log line's error field
// ("wss: <reason>: ..."), or the whole field when it has another form.
func logReason(line map[string]any) string {
	e, _ := line["error"].(string)
	if rest, ok := strings.CutPrefix(e, "wss: "); ok {
		if r, _, ok := strings.Cut(rest, ":"); ok {
			return r
		}
	}
	return e
}

// attackLedger keeps what the suite sent and what came back.
type attackLedger struct {
	// faults are the stripped uniform-fault bodies by response
	// Content-Type, each with the first request that got it.
	faults map[string]map[string]string
	// routeOf is the route of each correlation id sent.
	routeOf map[string]string
	// familyOf and nameOf are the family and the name of what each
	// correlation id carried.
	familyOf, nameOf map[string]string
	// securityFaults counts uniform faults per route.
	securityFaults map[string]int
	tooLarge       map[string]int
	mutants        map[string]int
	rejected       map[string]int
	accepted       []string
}

func newAttackLedger() *attackLedger {
	return &attackLedger{
		faults: map[string]map[string]string{}, routeOf: map[string]string{}, familyOf: map[string]string{}, nameOf: map[string]string{},
		securityFaults: map[string]int{}, tooLarge: map[string]int{}, mutants: map[string]int{}, rejected: map[string]int{},
	}
}

// fault records a uniform security fault.
func (l *attackLedger) fault(route string, r attackResponse) {
	stripped, _ := withoutCorrelationID(r.body)
	ct := r.header.Get("Content-Type")
	if l.faults[ct] == nil {
		l.faults[ct] = map[string]string{}
	}
	if _, ok := l.faults[ct][stripped]; !ok {
		l.faults[ct][stripped] = r.id
	}
	l.securityFaults[route]++
}

// TestAttackSuiteThroughGateway: WSS4J secures fresh messages in the
// signing profiles partners use; every hostile variant the attack
// generator makes of each, attacker re-signed ones included, is sent
// through the running gateway and must get the uniform WS-Security fault
// without reaching the backend. The original is then accepted, and every
// replay of it rejected. All faults are identical but for the correlation
// id, and the metrics count every rejection.
func TestAttackSuiteThroughGateway(t *testing.T) {
	started := time.Now()
	jar := testpeer.Jar(t, "wss4j")
	pki := newPartnerPKI(t)
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	// The suite asks each mutant for its verdict: one signer's hundreds of
	// one-off shapes a second would mostly be shed by the first-sight lanes
	// (503), which TestFirstSightLanesThroughGateway attacks on its own.
	gw := startGateway(t, pki.securedConfig(backend.URL, "server: {memory: {firstSightShare: 0}}"))

	bases := []attackBase{
		{name: "sign-bst/soap1.1", profile: "sign-bst", version: "1.1", route: "/signed"},
		{name: "sign-bst/soap1.2", profile: "sign-bst", version: "1.2", route: "/signed"},
		{name: "sign-issuerserial/soap1.1", profile: "sign-issuerserial", version: "1.1", route: "/signed"},
		{name: "sign-x509/soap1.1", profile: "sign-x509", version: "1.1", route: "/signed"},
		{name: "sign-encrypt/soap1.1", profile: "sign-encrypt", version: "1.1", route: "/encrypted"},
		{name: "encrypt-sign/soap1.1", profile: "encrypt-sign", version: "1.1", route: "/encrypted"},
	}
	var jobs []testpeer.Job
	for i := range bases {
		b := &bases[i]
		ns := soap.NS11
		if b.version == "1.2" {
			ns = soap.NS12
		}
		in := filepath.Join(pki.dir, "attack_"+strings.ReplaceAll(b.name, "/", "_")+".plain.xml")
		b.file = strings.TrimSuffix(in, ".plain.xml") + ".xml"
		require.NoError(t, os.WriteFile(in, plainEnvelope(ns, payload(1<<10)), 0o600))
		jobs = append(jobs, testpeer.Job{ID: b.name, Args: []string{"sign", "--profile", b.profile, "--in", in, "--out", b.file,
			"--key", pki.client.KeyFile, "--cert", pki.client.CertFile, "--encrypt-cert", pki.server.CertFile}})
	}
	signStart := time.Now()
	results := wss4jBatch(t, jar, jobs)
	for _, b := range bases {
		require.True(t, results[b.name].OK, "WSS4J sign %s: %s", b.name, results[b.name].Error)
	}
	signed := time.Now()
	t.Logf("setup %v (WSS4J batch %v)", signed.Sub(started).Round(time.Millisecond), signed.Sub(signStart).Round(time.Millisecond))

	attacker, err := attack.SelfIssuedResigner(time.Now)
	require.NoError(t, err)
	ledger := newAttackLedger()
	routeName := func(route string) string { return strings.TrimPrefix(route, "/") }
	seq := 0
	nextID := func(kind string) string { seq++; return fmt.Sprintf("atk-%s-%04d", kind, seq) }

	for _, b := range bases {
		msg, err := os.ReadFile(b.file)
		require.NoError(t, err)
		mutants, err := attack.MutateWithResigner(msg, attacker)
		require.NoError(t, err, b.name)
		baseStart := time.Now()
		acceptedBefore := len(ledger.accepted)
		for _, mu := range mutants {
			ledger.mutants[mu.Family]++
			t.Run("fail/"+b.name+"/"+mu.Name, func(t *testing.T) {
				id := nextID("m")
				ledger.routeOf[id], ledger.familyOf[id], ledger.nameOf[id] = routeName(b.route), mu.Family, b.name+" "+mu.Name
				hits := backend.count()
				r := sendAttack(t, gw, b.route, b.version, id, mu.Data)
				if r.status == http.StatusOK || backend.count() != hits {
					ledger.accepted = append(ledger.accepted, b.name+" "+mu.Name)
				}
				require.Equal(t, hits, backend.count(), "SECURITY: mutant %s of %s reached the backend (status %d)", mu.Name, b.name, r.status)
				if r.status == http.StatusRequestEntityTooLarge {
					// Only a resource bomb over the route's body limit may
					// be stopped before verification.
					require.Equal(t, attack.FamilyBomb, mu.Family, "413 for a %s mutant", mu.Family)
					require.Greater(t, len(mu.Data), routeBodyLimit, "413 under the route's body limit")
					assert.Contains(t, string(r.body), "Request body too large")
					ledger.tooLarge[mu.Family]++
					ledger.rejected[mu.Family]++
					return
				}
				requireSecurityFault(t, r.asResponse(), b.version)
				ledger.fault(b.route, r)
				ledger.rejected[mu.Family]++
			})
		}
		mutantsDone := time.Now()

		accepted := t.Run("ok/"+b.name, func(t *testing.T) {
			id := nextID("ok")
			ledger.routeOf[id], ledger.familyOf[id] = routeName(b.route), "original"
			hits := backend.count()
			r := sendAttack(t, gw, b.route, b.version, id, msg)
			if r.status == http.StatusInternalServerError && bytes.Contains(r.body, []byte("InvalidSecurity")) {
				ledger.fault(b.route, r) // counted, so that the metric checks stay exact
			}
			require.Equal(t, http.StatusOK, r.status, "the original after its mutants: %s\n%s", r.body, lastLog(gw))
			require.Equal(t, hits+1, backend.count())
		})
		switch {
		case accepted:
		case len(ledger.accepted) > acceptedBefore:
			// An accepted mutant carried the original's signature, so the
			// replay cache holds it: the replays below still mean something.
			t.Errorf("%s: the original was rejected after the gateway accepted a mutant of it (see above)", b.name)
		default:
			t.Errorf("%s: the original was not accepted, its replays are not meaningful", b.name)
			continue
		}
		replays, err := attack.Replays(msg)
		require.NoError(t, err, b.name)
		for _, rp := range replays {
			ledger.mutants[rp.Family]++
			t.Run("replay/"+b.name+"/"+rp.Name, func(t *testing.T) {
				id := nextID("r")
				ledger.routeOf[id], ledger.familyOf[id] = routeName(b.route), rp.Family
				hits := backend.count()
				r := sendAttack(t, gw, b.route, b.version, id, rp.Data)
				if r.status == http.StatusOK || backend.count() != hits {
					ledger.accepted = append(ledger.accepted, b.name+" "+rp.Name)
				}
				require.Equal(t, hits, backend.count(), "SECURITY: replay %s of %s reached the backend (status %d)", rp.Name, b.name, r.status)
				requireSecurityFault(t, r.asResponse(), b.version)
				ledger.fault(b.route, r)
				ledger.rejected[rp.Family]++
			})
		}
		t.Logf("%s: %d mutants in %v, original and %d replays in %v (%v after signing)", b.name, len(mutants),
			mutantsDone.Sub(baseStart).Round(time.Millisecond), len(replays), time.Since(mutantsDone).Round(time.Millisecond),
			time.Since(signed).Round(time.Second))
	}

	// Uniform failure: one fault body per SOAP version, whatever the cause.
	for ct, bodies := range ledger.faults {
		if !assert.Len(t, bodies, 1, "faults with Content-Type %q differ apart from the correlation id", ct) {
			for body, id := range bodies {
				t.Logf("first sent as %s:\n%s", id, body)
			}
		}
	}
	assert.Len(t, ledger.faults, 2, "one uniform fault per SOAP version")

	// The request log line of every rejection names its reason.
	require.Eventually(t, func() bool { return len(gw.logs.find("request")) >= seq }, 10*time.Second, 10*time.Millisecond)
	reasons := map[string]map[string]int{} // family -> reason -> count
	logReasons := map[string]map[string]int{}
	var masked []string
	for _, l := range gw.logs.find("request") {
		id, _ := l["id"].(string)
		fam, ok := ledger.familyOf[id]
		if !ok {
			continue
		}
		reason := logReason(l)
		switch l["outcome"] {
		case "too_large":
			reason = "too_large"
		case "ok":
			reason = "ACCEPTED"
		}
		if reasons[fam] == nil {
			reasons[fam] = map[string]int{}
		}
		reasons[fam][reason]++
		if reason == "replay" && fam != attack.FamilyReplay && fam != "original" {
			// The mutant passed every check but the replay cache: it is
			// only rejected because an earlier request carried the same
			// signature, and would be accepted on its own.
			masked = append(masked, ledger.nameOf[id])
		}
		if l["outcome"] == "security_rejected" {
			route := ledger.routeOf[id]
			if logReasons[route] == nil {
				logReasons[route] = map[string]int{}
			}
			logReasons[route][reason]++
		}
	}

	// Metrics: every security fault on /signed is one failure of policy
	// signed, with the reason the log line gives.
	fams := scrape(t, gw)
	var signedFailures float64
	metricReasons := map[string]int{}
	for _, m := range fams["wssgw_security_failures_total"].GetMetric() {
		if !matches(m, map[string]string{"policy": "signed"}) {
			continue
		}
		signedFailures += m.GetCounter().GetValue()
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "reason" && m.GetCounter().GetValue() > 0 {
				metricReasons[lp.GetValue()] = int(m.GetCounter().GetValue())
			}
		}
	}
	assert.Equal(t, float64(ledger.securityFaults["/signed"]), signedFailures,
		"wssgw_security_failures_total{policy=signed} against the security faults sent to /signed")
	assert.Equal(t, float64(ledger.securityFaults["/signed"]),
		value(t, fams, "wssgw_requests_total", map[string]string{"route": "signed", "outcome": "security_rejected"}))
	assert.Equal(t, logReasons["signed"], metricReasons, "failure reasons: log lines against metrics (policy signed)")

	// Summary.
	families := append(attack.Families(), attack.FamilyReplay, "original")
	for _, f := range families {
		var rs []string
		for r, n := range reasons[f] {
			rs = append(rs, fmt.Sprintf("%s=%d", r, n))
		}
		sort.Strings(rs)
		t.Logf("family %-9s mutants %4d rejected %4d (413: %d) reasons: %s", f, ledger.mutants[f], ledger.rejected[f],
			ledger.tooLarge[f], strings.Join(rs, " "))
	}
	t.Logf("security faults: /signed %d, /encrypted %d; metrics policy=signed %v", ledger.securityFaults["/signed"],
		ledger.securityFaults["/encrypted"], metricReasons)
	t.Logf("total %v", time.Since(started).Round(time.Millisecond))
	assert.Empty(t, ledger.accepted, "SECURITY: hostile requests the gateway accepted")
	sort.Strings(masked)
	assert.Empty(t, masked, "SECURITY: mutants that passed verification and were stopped by the replay cache only")
}

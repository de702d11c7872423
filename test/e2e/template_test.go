package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpeer"
)

// TestWSS4JProfilesOnTemplatePath sends three fresh WSS4J messages of each
// profile through the binary: the first is verified by the DOM engine and
// teaches a template, the next ones are verified on the template path
// (asserted through wssgw_template_lookups_total) and still forward the
// exact payload.
func TestWSS4JProfilesOnTemplatePath(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	pki := newPartnerPKI(t)
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	// The admin templates API is off by default (admin.templates).
	gw := startGateway(t, strings.Replace(pki.securedConfig(backend.URL, ""),
		"admin: {listen: 127.0.0.1:0}", "admin: {listen: 127.0.0.1:0, templates: true}", 1))

	profiles := []struct {
		profile, route string
		template       bool // on the template path once learned (after learnAfter messages)
	}{
		{"sign-bst", "signed", true}, {"sign-issuerserial", "signed", true}, {"sign-ski", "signed", true},
		{"sign-thumbprint", "signed", true}, {"sign-x509", "signed", true}, {"username-digest", "user", true},
		{"sign-encrypt", "encrypted", true}, {"encrypt-sign", "encrypted", true},
	}
	// templates.learnAfter's default: a shape is learned from its second
	// message, so the third is the first hit.
	const rounds, learnAfter = 3, 2
	var jobs []testpeer.Job
	type sent struct{ file, payload string }
	files := map[string][]sent{}
	for _, p := range profiles {
		for k := range rounds {
			name := fmt.Sprintf("%s/%d", p.profile, k)
			body := payload(1<<10) + fmt.Sprintf("<n>%d</n>", k)
			in := filepath.Join(pki.dir, fmt.Sprintf("tpl_%s_%d.plain.xml", p.profile, k))
			out := filepath.Join(pki.dir, fmt.Sprintf("tpl_%s_%d.xml", p.profile, k))
			require.NoError(t, os.WriteFile(in, plainEnvelope(soap.NS11, body), 0o600))
			jobs = append(jobs, testpeer.Job{ID: name, Args: []string{"sign", "--profile", p.profile, "--in", in, "--out", out,
				"--key", pki.client.KeyFile, "--cert", pki.client.CertFile,
				"--encrypt-cert", pki.server.CertFile, "--user", pki.clientUser, "--password", pki.pwd}})
			files[p.profile] = append(files[p.profile], sent{out, body})
		}
	}
	results := wss4jBatch(t, jar, jobs)
	for id, r := range results {
		require.True(t, r.OK, "WSS4J sign %s: %s", id, r.Error)
	}
	for _, p := range profiles {
		t.Run("ok/"+p.profile, func(t *testing.T) {
			for k, s := range files[p.profile] {
				msg, err := os.ReadFile(s.file)
				require.NoError(t, err)
				before := value(t, scrape(t, gw), metrics.NameTemplateLookups, map[string]string{"route": p.route, "result": metrics.LookupHit})
				resp := gw.post("/"+p.route, contentType("1.1"), bytes.NewReader(msg))
				body := readAll(t, resp)
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s\n%s", body, lastLog(gw))
				fwd, _ := backend.last()
				assert.Contains(t, string(fwd), s.payload, "the payload arrives byte for byte")
				after := value(t, scrape(t, gw), metrics.NameTemplateLookups, map[string]string{"route": p.route, "result": metrics.LookupHit})
				hit := after == before+1
				if k < learnAfter || !p.template {
					assert.False(t, hit, "message %d on the template path", k)
				} else {
					assert.True(t, hit, "message %d not on the template path", k)
				}
			}
		})
	}

	t.Run("ok/admin-lists-shapes-not-values", func(t *testing.T) {
		status, body := get(t, gw.admin+"/templates")
		require.Equal(t, http.StatusOK, status)
		var infos []struct {
			Policy, ID string
			Hits       int
		}
		require.NoError(t, json.Unmarshal(body, &infos))
		require.Len(t, infos, len(profiles), "one template per profile")
		for _, in := range infos {
			assert.Equal(t, rounds-learnAfter, in.Hits, "%s/%s", in.Policy, in.ID)
		}
		status, body = get(t, gw.admin+"/templates/"+infos[0].ID)
		require.Equal(t, http.StatusOK, status)
		assert.Contains(t, string(body), "{base64}")
		assert.NotContains(t, string(body), files["sign-bst"][0].payload, "no payload value leaks")
		status, _ = get(t, gw.admin+"/templates/nope")
		assert.Equal(t, http.StatusNotFound, status)
	})

	t.Run("ok/export-and-warm-start", func(t *testing.T) {
		out, stderr, code := runCLI(t, nil, "templates", "list", "--admin", gw.admin)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, 1+len(profiles), len(strings.Split(strings.TrimSpace(out), "\n")), "a header and one template per profile:\n%s", out)
		out, stderr, code = runCLI(t, nil, "templates", "export", "--admin", gw.admin)
		require.Equal(t, 0, code, stderr)
		file := filepath.Join(pki.dir, "templates.json")
		require.NoError(t, os.WriteFile(file, []byte(out), 0o600))

		// A new gateway (a new pod) starts from the file: its very first
		// message of a known shape is on the template path.
		gw2 := startGateway(t, pki.securedConfig(backend.URL, "templates: {importFile: "+file+"}"))
		// Warm start needs no admin API, which stays off by default: an
		// export holds real partner messages.
		for _, path := range []string{"/templates", "/templates/export"} {
			status, _ := get(t, gw2.admin+path)
			assert.Equal(t, http.StatusNotFound, status, path)
		}
		m := scrape(t, gw2)
		assert.Equal(t, float64(len(profiles)), value(t, m, metrics.NameTemplates, map[string]string{"policy": "signed"})+
			value(t, m, metrics.NameTemplates, map[string]string{"policy": "user"})+
			value(t, m, metrics.NameTemplates, map[string]string{"policy": "encrypted"}))
		// Signed once gw2 runs: a new pod's memory replay store refuses
		// messages created before it started (issue 16).
		warm := []struct{ profile, route string }{{"sign-ski", "signed"}, {"sign-encrypt", "encrypted"}}
		var jobs []testpeer.Job
		for _, c := range warm {
			in := filepath.Join(pki.dir, "tpl_warm_"+c.profile+".plain.xml")
			// The shape the templates were learned from.
			require.NoError(t, os.WriteFile(in, plainEnvelope(soap.NS11, payload(1<<10)+"<n>9</n>"), 0o600))
			jobs = append(jobs, testpeer.Job{ID: c.profile, Args: []string{"sign", "--profile", c.profile, "--in", in,
				"--out", strings.TrimSuffix(in, ".plain.xml") + ".xml",
				"--key", pki.client.KeyFile, "--cert", pki.client.CertFile, "--encrypt-cert", pki.server.CertFile}})
		}
		for id, r := range wss4jBatch(t, jar, jobs) {
			require.True(t, r.OK, "WSS4J sign %s: %s", id, r.Error)
		}
		for _, c := range warm {
			msg, err := os.ReadFile(filepath.Join(pki.dir, "tpl_warm_"+c.profile+".xml"))
			require.NoError(t, err)
			resp := gw2.post("/"+c.route, contentType("1.1"), bytes.NewReader(msg))
			body := readAll(t, resp)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			assert.Equal(t, 1.0, value(t, scrape(t, gw2), metrics.NameTemplateLookups, map[string]string{"route": c.route, "result": metrics.LookupHit}), c.profile)
		}
	})
}

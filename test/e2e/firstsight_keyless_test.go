package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/testtraffic"
)

// TestFirstSightKeylessFlood (issue 14, review) attacks the lanes through
// the real binary without a trusted key: fresh shapes signed under
// untrusted certificates invented per message (each a claim no
// accepted message made) and garbage claiming random tokens all share
// lane 0, which admits one at a time; what it admits the DOM engine
// refuses (untrusted, malformed). Partner B's new shape, under the key
// whose claim an accepted message made before, is served from B's own
// lane in the same burst, and partner A's hits go on. The backend gets
// exactly the accepted messages.
func TestFirstSightKeylessFlood(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "lanes CA")
	caFile := ca.WriteCert(t, dir)
	a, b := ca.IssueRSA(t, dir, "partner-a"), ca.IssueRSA(t, dir, "partner-b")
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
routes:
  - {name: mix, path: /mix, backend: %s, policy: mix}
policies:
  mix:
    require: [signature, timestamp]
    trust: {caFiles: [%q], knownCertFiles: [%q, %q]}
`, backend.URL, caFile, a.CertFile, b.CertFile))
	ga := testtraffic.New(1, &wcrypto.KeyPair{Signer: a.Key, Certificate: a.Cert}, time.Now)
	gb := testtraffic.New(2, &wcrypto.KeyPair{Signer: b.Key, Certificate: b.Cert}, time.Now)
	lookups := func(result string) float64 {
		return value(t, scrape(t, gw), "wssgw_template_lookups_total", map[string]string{"route": "mix", "result": result})
	}

	// The flood, made up front: one invented identity per message, and
	// garbage whose token is random bytes.
	const invented, garbage, mixed = 12, 12, 8
	var flood []testtraffic.Message
	rogue := testpki.NewCA(t, "rogue CA") // trusted by nobody
	for i := range invented {
		l := rogue.IssueRSA(t, dir, fmt.Sprintf("rogue-%d", i))
		g := testtraffic.New(uint64(100+i), &wcrypto.KeyPair{Signer: l.Key, Certificate: l.Cert}, time.Now)
		flood = append(flood, drawToken(t, g.Fresh))
	}
	for i := range garbage {
		m := drawToken(t, ga.Fresh)
		// A's fresh shape with its token replaced by random base64: a
		// claim of nobody, and no valid signature.
		start := bytes.Index(m.Signed, []byte("BinarySecurityToken"))
		open := start + bytes.IndexByte(m.Signed[start:], '>') + 1
		end := open + bytes.IndexByte(m.Signed[open:], '<')
		junk := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{byte(i), 0x5a, 0xc3}, (end-open)*3/4/3))
		m.Signed = append(append(append([]byte{}, m.Signed[:open]...), junk...), m.Signed[end:]...)
		flood = append(flood, m)
	}
	mix := make([]testtraffic.Message, mixed)
	for i := range mix {
		mix[i] = draw(t, ga.Next)
	}
	fromB := drawToken(t, gb.Fresh)
	// B's claim is known (an accepted message made it, no hit flowing
	// yet: no lanes); then A's mix until its shapes hit.
	require.Equal(t, http.StatusOK, sendMessage(t, gw, drawToken(t, gb.Fresh)).StatusCode)
	for i := 0; lookups("hit") == 0; i++ {
		require.Less(t, i, 40, "no template hit after 40 messages of the mix")
		require.Equal(t, http.StatusOK, sendMessage(t, gw, draw(t, ga.Next)).StatusCode)
	}
	before, hits := backend.count(), lookups("hit")

	var wg sync.WaitGroup
	status := make([]int, len(flood))
	for i, m := range flood {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := sendMessage(t, gw, m)
			readAll(t, resp)
			status[i] = resp.StatusCode
		}()
	}
	bStatus := sendMessage(t, gw, fromB).StatusCode
	mixStatus := map[int]int{}
	for _, m := range mix {
		mixStatus[sendMessage(t, gw, m).StatusCode]++
	}
	wg.Wait()
	mixHits := int(lookups("hit") - hits)

	byStatus := map[int]int{}
	for _, s := range status {
		byStatus[s]++
	}
	t.Logf("keyless flood of %d: %v; B: %d; A's mix: %v, %d hits", len(flood), byStatus, bStatus, mixStatus, mixHits)
	assert.Zero(t, byStatus[http.StatusOK], "no keyless message accepted")
	assert.GreaterOrEqual(t, byStatus[http.StatusServiceUnavailable], len(flood)-6, "lane 0 sheds the flood, one lane for every invented identity: one at a time")
	assert.Equal(t, http.StatusOK, bStatus, "B's new shape is in B's lane, not lane 0")
	assert.GreaterOrEqual(t, mixHits, 1)
	assert.GreaterOrEqual(t, mixStatus[http.StatusOK], mixHits, "every hit served: %v", mixStatus)
	assert.Equal(t, 1+mixStatus[http.StatusOK], backend.count()-before, "the backend got B's message and A's mix, nothing of the flood")
	assert.Equal(t, float64(byStatus[http.StatusServiceUnavailable]+mixStatus[http.StatusServiceUnavailable]),
		value(t, scrape(t, gw), "wssgw_overload_rejections_total", map[string]string{"route": "mix", "reason": "first_sight"}))
}

package attack

import (
	"bytes"
	"context"
	"mime"
	"strings"
	"testing"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/replay"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/template"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// engines is one policy with both engines: the DOM engine and a template
// automaton (learning without a rate limit, never shadowing, so that its
// own verdicts show) over the same DOM engine.
type engines struct {
	policy   *wss.Policy
	dom      *dom.Engine
	template *template.Engine
}

// signedMessages signs plain envelopes with a throw-away CA's key, so that
// the family runs without the WSS4J vectors.
type signedMessages struct {
	leaf    *testpki.Leaf
	renewed *testpki.Leaf // another certificate of leaf's key
	ca      string
	now     time.Time
}

func newSignedMessages(t *testing.T) *signedMessages {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "attack CA")
	s := &signedMessages{leaf: ca.IssueRSA(t, dir, "partner"), ca: ca.WriteCert(t, dir), now: time.Now().UTC().Truncate(time.Second)}
	s.renewed = ca.Renew(t, t.TempDir(), s.leaf)
	return s
}

// sign secures a SOAP envelope of the given version whose Body holds text.
func (s *signedMessages) sign(t *testing.T, soap12 bool, text string) []byte {
	t.Helper()
	ns := NSSOAP11
	if soap12 {
		ns = NSSOAP12
	}
	env := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<soapenv:Envelope xmlns:soapenv="` + ns + `">` + "\n  <soapenv:Header/>\n  " +
		`<soapenv:Body><ord:PlaceOrder xmlns:ord="urn:example:orders"><ord:sku>` + text + `</ord:sku></ord:PlaceOrder></soapenv:Body>` + "\n</soapenv:Envelope>"
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = s.leaf.Key, s.leaf.Cert
	o.Now = func() time.Time { return s.now }
	out, err := signer.Secure([]byte(env), o)
	require.NoError(t, err)
	return out
}

// learnAll are template store options that learn without a rate limit and
// never shadow, so that the template path's own verdicts show; the bounds
// are the config's defaults.
var learnAll = template.Options{MaxTemplates: 1000, MaxBytes: 64 << 20, LearnPerSecond: 1e9, LearnBurst: 1e9}

// engines compiles the default policy (signed Body and Timestamp from the
// CA, replay off so that a message may be verified by both engines) with
// extra applied as configuration keys, exactly as a config file spells
// them: a key the build does not know fails the test, not the build.
func (s *signedMessages) engines(t *testing.T, extra map[string]any) *engines {
	t.Helper()
	p := config.DefaultPolicy()
	p.Replay = "off"
	p.Trust.CAFiles = []string{s.ca}
	if len(extra) > 0 {
		d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{Result: &p, ErrorUnused: true})
		require.NoError(t, err)
		require.NoError(t, d.Decode(extra), "policy keys %v", extra)
	}
	pol, err := wss.Compile("attack", p, nil, reload.Options{})
	require.NoError(t, err)
	d, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	te, err := template.New(d, xmlscan.DefaultConfig(), template.NewStore(pol, learnAll, nil), nil)
	require.NoError(t, err)
	return &engines{policy: pol, dom: d, template: te}
}

// verify runs data through both engines.
func (e *engines) verify(data []byte, now time.Time) (tres *wss.Result, tfwd []byte, terr error, dfwd []byte, derr error) {
	tres, tfwd, terr = e.policy.Verify(context.Background(), e.template, data, now)
	_, dfwd, derr = e.policy.Verify(context.Background(), e.dom, data, now)
	return
}

// learn has the template engine accept data, so that the next message of
// its shape takes the template path.
func (e *engines) learn(t *testing.T, data []byte, now time.Time) {
	t.Helper()
	_, _, err := e.policy.Verify(context.Background(), e.template, data, now)
	require.NoError(t, err, "the message that teaches the template")
}

var versions = []struct {
	name   string
	soap12 bool
}{{"soap1.1", false}, {"soap1.2", true}}

// TestEnvelopeFamilyOnBothEngines: every envelope mutant of a message the
// engines accept, on the template path (a template learned for the
// original's shape) and on the DOM engine, is rejected by both (issue 13
// items 6 and 7: the strict envelope rule is a gate rule, and the template
// automaton only matches shapes the DOM engine accepted).
func TestEnvelopeFamilyOnBothEngines(t *testing.T) {
	s := newSignedMessages(t)
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			e := s.engines(t, nil)
			e.learn(t, s.sign(t, v.soap12, "learn"), s.now)
			base := s.sign(t, v.soap12, "attack")
			res, fwd, err, dfwd, derr := e.verify(base, s.now)
			require.NoError(t, err)
			require.NoError(t, derr)
			require.Equal(t, metrics.LookupHit, res.Lookup, "the original is on the template path")
			require.Equal(t, string(dfwd), string(fwd), "both engines forward the same bytes")

			ms, err := Mutate(base)
			require.NoError(t, err)
			n := 0
			for _, mu := range ms {
				if mu.Family != FamilyEnvelope {
					continue
				}
				n++
				t.Run("fail/"+mu.Name, func(t *testing.T) {
					tres, tfwd, terr, dfwd, derr := e.verify(mu.Data, s.now)
					lookup := ""
					if tres != nil {
						lookup = tres.Lookup
					}
					assert.Error(t, terr, "template engine (lookup %q) accepts it and forwards:\n%s", lookup, tfwd)
					assert.Error(t, derr, "DOM engine accepts it and forwards:\n%s", dfwd)
				})
			}
			assert.GreaterOrEqual(t, n, 25, "envelope mutants")
		})
	}
}

// TestInjectionsOnBothEngines: an unsigned header block or Envelope/Header
// attribute (issue 13 item 8) under each unsignedHeaders mode, on both
// engines: strip (the default) accepts the message and forwards it without
// the injected content, the same bytes from both engines; reject refuses
// it unless unsignedAllow names it; forward passes it on.
func TestInjectionsOnBothEngines(t *testing.T) {
	s := newSignedMessages(t)
	modes := []struct {
		name   string
		keys   func(allow string) map[string]any
		accept bool // the message is accepted
		kept   bool // the injected content is forwarded
	}{
		{"strip-default", func(string) map[string]any { return nil }, true, false},
		{"strip", func(string) map[string]any { return map[string]any{"unsignedHeaders": "strip"} }, true, false},
		{"reject", func(string) map[string]any { return map[string]any{"unsignedHeaders": "reject"} }, false, false},
		{"reject-allowed", func(a string) map[string]any {
			return map[string]any{"unsignedHeaders": "reject", "unsignedAllow": []string{a}}
		}, true, true},
		{"forward", func(string) map[string]any { return map[string]any{"unsignedHeaders": "forward"} }, true, true},
	}
	for _, v := range versions {
		// Two messages of one shape: the first teaches the template of
		// the injected shape, the second is verified by both engines.
		learn, err := Injections(s.sign(t, v.soap12, "learn"))
		require.NoError(t, err)
		base := s.sign(t, v.soap12, "attack")
		injs, err := Injections(base)
		require.NoError(t, err)
		require.Len(t, injs, len(learn))
		signedBody := bodyBytes(t, base)
		for _, mode := range modes {
			for i, inj := range injs {
				name := "ok/"
				if !mode.accept {
					name = "fail/"
				}
				t.Run(name+v.name+"/"+mode.name+"/"+inj.Name, func(t *testing.T) {
					e := s.engines(t, mode.keys(inj.Allow))
					if mode.accept {
						e.learn(t, learn[i].Data, s.now)
					}
					tres, tfwd, terr, dfwd, derr := e.verify(inj.Data, s.now)
					if !mode.accept {
						assert.Error(t, terr, "template engine accepts it")
						assert.Error(t, derr, "DOM engine accepts it")
						return
					}
					require.NoError(t, terr, "template engine")
					require.NoError(t, derr, "DOM engine")
					t.Logf("template lookup: %s", tres.Lookup)
					assert.Equal(t, string(dfwd), string(tfwd), "both engines forward the same bytes")
					for _, fwd := range [][]byte{tfwd, dfwd} {
						assert.Contains(t, string(fwd), signedBody, "the signed Body is forwarded byte for byte")
						for _, s := range inj.Injected {
							if mode.kept {
								assert.Contains(t, string(fwd), s)
							} else {
								assert.NotContains(t, string(fwd), s, "unsigned content forwarded")
							}
						}
						for _, s := range inj.Never {
							assert.NotContains(t, string(fwd), s, "a comment is never forwarded")
						}
					}
				})
			}
		}
	}
}

// bodyBytes is the soap:Body element of a message as sent.
func bodyBytes(t *testing.T, data []byte) string {
	t.Helper()
	m, err := parse(data)
	require.NoError(t, err)
	return m.bytesOf(m.body)
}

// TestEnvelopeGenerators checks the generators themselves on messages of
// both versions: names unique, every envelope mutant and injection still
// well-formed where it must be (so a rejection is the rule's, not the
// parser's), injected content present, labels parseable.
func TestEnvelopeGenerators(t *testing.T) {
	s := newSignedMessages(t)
	gate, err := xmlscan.NewScanner(xmlscan.Config{Limits: xmlscan.DefaultLimits(), NoCommentsIn: []xmlscan.Name{xmlscan.SecurityHeader}})
	require.NoError(t, err)
	var d xmlscan.Document
	for _, v := range versions {
		msg := s.sign(t, v.soap12, "x")
		ms, err := Mutate(msg)
		require.NoError(t, err)
		names := map[string]bool{}
		for _, mu := range ms {
			if mu.Family != FamilyEnvelope {
				continue
			}
			names[mu.Name] = true
			outside := strings.HasSuffix(mu.Name, "-after-envelope") || mu.Name == "env/declared-utf-7"
			if !outside {
				// Well-formed XML for the gate as it was before issue 13:
				// what rejects it must be the envelope rule.
				assert.NoError(t, gate.Scan(mu.Data, &d), "%s %s", v.name, mu.Name)
			}
		}
		for _, n := range []string{"env/text-before-header", "env/cdata-fake-body-between-header-and-body", "env/text-after-body",
			"env/comment-after-security", "env/text-before-security", "env/element-after-body", "env/other-version-header-before-header",
			"env/declared-utf-7"} {
			assert.True(t, names[n], "%s: mutant %s missing", v.name, n)
		}

		injs, err := Injections(msg)
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, inj := range injs {
			assert.False(t, seen[inj.Name], inj.Name)
			seen[inj.Name] = true
			assert.Equal(t, FamilyUnsigned, inj.Family)
			require.NoError(t, gate.Scan(inj.Data, &d), inj.Name)
			for _, s := range inj.Injected {
				assert.Contains(t, string(inj.Data), s, inj.Name)
			}
			_, _, ok := config.ParseQName(inj.Allow)
			assert.True(t, ok, "%s: allow %q", inj.Name, inj.Allow)
		}
		assert.True(t, seen["unsigned/header-block-first"] && seen["unsigned/envelope-attribute"])

		labels, err := Labels(msg)
		require.NoError(t, err)
		mismatch := 0
		for _, l := range labels {
			if l.VersionMismatch {
				mismatch++
			}
			mt, _, _ := mime.ParseMediaType(l.ContentType)
			if mt == "" {
				mt, _, _ = strings.Cut(l.ContentType, ";")
			}
			assert.Equal(t, l.VersionMismatch, (mt == "text/xml") == v.soap12, "%s %s", l.Name, l.ContentType)
		}
		assert.Equal(t, 2, mismatch)
		assert.True(t, bytes.HasPrefix(msg, []byte("<?xml")))
	}
}

// TestTokenSwapIsReplayOnBothEngines: an accepted message resent with its
// BinarySecurityToken swapped for another certificate of the same key
// (a same-key renewal from the same CA) is a replay, on the template path
// and on the DOM engine (issue 13 item 3).
func TestTokenSwapIsReplayOnBothEngines(t *testing.T) {
	s := newSignedMessages(t)
	for _, v := range versions {
		for _, engine := range []string{"template", "dom"} {
			t.Run("fail/"+v.name+"/"+engine, func(t *testing.T) {
				e := s.enginesWithReplay(t)
				var eng wss.Engine = e.dom
				if engine == "template" {
					eng = e.template
					e.learn(t, s.sign(t, v.soap12, "learn"), s.now)
				}
				msg := s.sign(t, v.soap12, "swap")
				res, _, err := e.policy.Verify(context.Background(), eng, msg, s.now)
				require.NoError(t, err, "the original is accepted")
				if engine == "template" {
					require.Equal(t, metrics.LookupHit, res.Lookup)
				}
				swaps, err := TokenSwaps(msg, s.renewed.Cert.Raw)
				require.NoError(t, err)
				require.Len(t, swaps, 1)
				require.NotEqual(t, msg, swaps[0].Data)
				res, fwd, err := e.policy.Verify(context.Background(), eng, swaps[0].Data, s.now)
				var we *wss.Error
				require.ErrorAs(t, err, &we, "SECURITY: the swapped message is accepted again and forwarded:\n%s", fwd)
				assert.Equal(t, wss.ReasonReplay, we.Reason, "%v", err)
				if engine == "template" && res != nil {
					assert.Equal(t, metrics.LookupHit, res.Lookup, "the swapped message is on the template path")
				}
			})
		}
	}
}

// enginesWithReplay is engines with the policy's replay check on, over a
// fresh memory store.
func (s *signedMessages) enginesWithReplay(t *testing.T) *engines {
	t.Helper()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{s.ca}
	pol, err := wss.Compile("attack", p, replay.NewMemory(replay.MemoryOptions{Clock: func() time.Time { return s.now }}), reload.Options{})
	require.NoError(t, err)
	d, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	te, err := template.New(d, xmlscan.DefaultConfig(), template.NewStore(pol, learnAll, nil), nil)
	require.NoError(t, err)
	return &engines{policy: pol, dom: d, template: te}
}

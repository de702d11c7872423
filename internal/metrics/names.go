package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metric names: the exported surface that dashboards and alerts use. They do
// not change once released.
const (
	Namespace = "wssgw"

	NameBuildInfo       = Namespace + "_build_info"
	NameRequests        = Namespace + "_requests_total"
	NameRequestDuration = Namespace + "_request_duration_seconds"
	NameBackendDuration = Namespace + "_backend_duration_seconds"
	NameInFlight        = Namespace + "_requests_in_flight"
	NameReceivedBytes   = Namespace + "_received_bytes_total"
	NameSentBytes       = Namespace + "_sent_bytes_total"
	NameReady           = Namespace + "_ready"
	NameStageDuration   = Namespace + "_stage_duration_seconds"
	NameSecurityFailure = Namespace + "_security_failures_total"
	NameAlgorithmUses   = Namespace + "_security_algorithm_uses_total"
	// NameUnsignedStripped counts what a policy left out of the forwarded
	// envelope because no trusted signature covered it, by policy and kind
	// (header, attribute, comment).
	NameUnsignedStripped = Namespace + "_unsigned_stripped_total"

	// Template automaton (the fast path). Lookups are per route; the store
	// is per policy.
	NameTemplateLookups  = Namespace + "_template_lookups_total"
	NameTemplatesLearned = Namespace + "_templates_learned_total"
	NameTemplatesSkipped = Namespace + "_template_learn_skipped_total"
	NameTemplatesEvicted = Namespace + "_templates_evicted_total"
	NameTemplates        = Namespace + "_templates"
	NameTemplateBytes    = Namespace + "_template_bytes"
	NameShadowChecks     = Namespace + "_template_shadow_checks_total"

	// NameResponseSigning counts responses on routes that sign them, by
	// route and result (ResponseResults).
	NameResponseSigning = Namespace + "_response_signing_total"

	// NameCertificateExpiry is the notAfter of every certificate the
	// gateway loaded (TLS, trust anchors and pins, decryption, signing).
	NameCertificateExpiry = Namespace + "_certificate_expiry_timestamp_seconds"

	// OCSP revocation checking of partner certificates (per policy with
	// trust.ocsp enabled): background fetches by result, the cache by
	// status, and the age of its oldest response.
	NameOCSPFetches        = Namespace + "_ocsp_fetches_total"
	NameOCSPCertificates   = Namespace + "_ocsp_certificates"
	NameOCSPOldestResponse = Namespace + "_ocsp_oldest_response_age_seconds"
)

// Label names.
const (
	LabelRoute   = "route"
	LabelOutcome = "outcome"
	LabelStage   = "stage"
	LabelPolicy  = "policy"
	LabelReason  = "reason"
	LabelKind    = "kind"
	LabelAlg     = "algorithm"
	LabelResult  = "result"
	LabelUse     = "use"
	LabelSubject = "subject"
	LabelStatus  = "status"
	// LabelCryptoBackend on wssgw_build_info says which build runs: go,
	// go-boringcrypto or openssl (issue 18).
	LabelCryptoBackend = "crypto_backend"
)

// Values of the result label of template lookups: a hit, or why the message
// went to the DOM engine.
const (
	LookupHit        = "hit"
	LookupNoTemplate = "no_template" // no template matched the bytes
	LookupRejected   = "rejected"    // matched, but a slot or binding check failed
	LookupDisabled   = "disabled"    // templates off for the policy
)

// Values of the reason label of skipped learning.
const (
	SkipRateLimited = "rate_limited"
	SkipFull        = "full"
	SkipUnsupported = "unsupported"
)

// Values of the result label of shadow checks.
const (
	ShadowAgree    = "agree"
	ShadowDisagree = "disagree"
)

// Stages of the security pipeline, the values of the stage label.
const (
	StageGate    = "gate"    // strict XML gate (and re-gating after decryption)
	StageVerify  = "verify"  // engine work other than gate and decryption
	StageDecrypt = "decrypt" // key transport and data decryption
	StagePolicy  = "policy"  // policy check and replay store
	StageMatch   = "match"   // template automaton matching and slot checks
	StageSign    = "sign"    // response signing
)

// Values of the result label of response signing.
const (
	ResponseSigned  = "signed"  // signed (buffered, or streamed to the end)
	ResponseFailed  = "failed"  // could not be signed: the partner got a 502 fault
	ResponseAborted = "aborted" // a streamed response cut before its signature part
	ResponsePassed  = "passed"  // no SOAP content to sign (an empty one-way reply)
	// ResponseBackendError: the backend was unreachable, timed out or broke
	// off; the partner got the gateway's own (unsigned) fault.
	ResponseBackendError = "backend_error"
)

// NoRoute is the route label of requests that matched no route.
const NoRoute = "_none"

// LatencyBuckets span 25 µs to about 10 s in factors of two: fine enough to
// see a 50 µs template fast path and coarse enough for slow backends
// (DefBuckets start at 5 ms, far too coarse for the fast path).
var LatencyBuckets = prometheus.ExponentialBucketsRange(25e-6, 13.1072, 20)

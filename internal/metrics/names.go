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

	// NameEngineDuration is the time the WS-Security engine (template
	// path or DOM engine) took on a message it verified, by route and
	// engine: the fast path's gain, without the backend in it.
	NameEngineDuration = Namespace + "_engine_duration_seconds"

	// Replay store health: every Seen by store kind and result, its
	// latency (a Redis round trip), and the memory store's fill.
	NameReplayOperations = Namespace + "_replay_store_operations_total"
	NameReplayDuration   = Namespace + "_replay_store_duration_seconds"
	NameReplayEntries    = Namespace + "_replay_store_entries"
	NameReplayCapacity   = Namespace + "_replay_store_capacity"

	// NameLegacyAlgorithms counts messages that used a legacy algorithm
	// (SHA-1, RSA-1.5, CBC, RSA under 2048 bits), by policy, algorithm and
	// the verified signer's subject: which partner to call.
	NameLegacyAlgorithms = Namespace + "_legacy_algorithm_messages_total"
	// NameRateLimitRejections counts requests refused by a rate or
	// concurrency limit (routes[].limits), by route and scope
	// (RateLimitScopes).
	NameRateLimitRejections = Namespace + "_ratelimit_rejections_total"
	// NameRateLimitTracked is the clients and signers a route's limits
	// remember now (at most clients.maxTracked each), by route and scope
	// (client, signer); NameRateLimitForgotten counts those forgotten to
	// make room: a steady rate means a spray of addresses, or a
	// maxTracked below the real number of clients.
	NameRateLimitTracked   = Namespace + "_ratelimit_tracked_identities"
	NameRateLimitForgotten = Namespace + "_ratelimit_forgotten_identities_total"
	// Replay store honesty (issue 16): each time the replay store was found
	// to have lost its keys, by cause (ReplayResetStartup, ReplayResetLost),
	// and 1 while the window after the latest loss is open, in which
	// messages created before it are refused.
	NameReplayStoreResets      = Namespace + "_replay_store_resets_total"
	NameReplayStoreResetWindow = Namespace + "_replay_store_reset_window"
	// The memory budget (server.memory, internal/budget): request body
	// bytes held by in-flight requests, the budget they are held to, and
	// requests refused with 503 because of it, by route and reason
	// (OverloadReasons).
	NameMemoryInflight     = Namespace + "_memory_inflight_bytes"
	NameMemoryBudget       = Namespace + "_memory_budget_bytes"
	NameOverloadRejections = Namespace + "_overload_rejections_total"
	// NameEgressRequests counts the calls of egress routes (issue 15), by
	// route and result (EgressResults): whether the partner's response
	// was verified and handed to the legacy client. The time spent is in
	// the route's stage histogram (sign: securing the request, verify:
	// verifying the response) and backend histogram (the partner).
	NameEgressRequests = Namespace + "_egress_requests_total"
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
	LabelEngine  = "engine"
	LabelStore   = "store"
	LabelSigner  = "signer"
	LabelScope   = "scope"
	LabelCause   = "cause"
	// LabelCryptoBackend on wssgw_build_info says which build runs: go,
	// go-boringcrypto or openssl (issue 18).
	LabelCryptoBackend = "crypto_backend"
)

// Values of the scope label of rate-limit rejections: what the limit that
// refused counts (internal/limit.Scope).
const (
	ScopeRoute  = "route"  // the route as a whole
	ScopeClient = "client" // one client address, before the body is read
	ScopeSigner = "signer" // one verified signer, after verification
)

// RateLimitScopes lists every scope, for tests and pre-initialized series.
func RateLimitScopes() []string { return []string{ScopeRoute, ScopeClient, ScopeSigner} }

// Values of the result label of template lookups: a hit, or why the message
// went to the DOM engine.
const (
	LookupHit        = "hit"
	LookupNoTemplate = "no_template" // no template matched the bytes
	LookupRejected   = "rejected"    // matched, but a slot or binding check failed
	LookupDisabled   = "disabled"    // templates off for the policy
	// LookupNotApplicable: a message no template can describe by design
	// (an MTOM/SwA package with encrypted content or attachments,
	// template/attachments.go; signed packages are hits or misses, issue
	// 14) went to the DOM engine. It is not a miss: the
	// template-miss alert leaves it out.
	LookupNotApplicable = "not_applicable"
)

// LookupResults lists the values of the result label of template lookups.
func LookupResults() []string {
	return []string{LookupHit, LookupNoTemplate, LookupRejected, LookupDisabled, LookupNotApplicable}
}

// Engines, the values of the engine label (and of the request log's
// engine field).
const (
	EngineTemplate = "template" // a learned template matched (the fast path)
	EngineDOM      = "dom"      // the DOM engine processed the message
)

// Replay store kinds (the store label) and results of a Seen (the result
// label).
const (
	ReplayMemory   = "memory"
	ReplayRedis    = "redis"
	ReplayRecorded = "recorded" // first sight: the key is stored
	ReplayReplayed = "replayed" // the key was already held: a replay
	ReplayError    = "error"    // the store could not answer (fail closed)
)

// ReplayResults lists the values of the result label of replay store
// operations.
func ReplayResults() []string { return []string{ReplayRecorded, ReplayReplayed, ReplayError} }

// Values of the signer label of legacy algorithm use that are not a
// subject (an RFC 4514 subject always holds "=", so they cannot clash).
const (
	SignerNone  = "none"  // no certificate signer: unsigned, UsernameToken or HMAC key
	SignerOther = "other" // more distinct signers than MaxLegacySigners
)

// MaxLegacySigners bounds the signer label of legacy algorithm use per
// policy. Signers are certificates the policy's trust store accepted, so
// they are partners, not attackers; but a CA trust store admits any
// number of them, so the bound keeps a CA's issuance from growing the
// series without end. Subjects, not thumbprints, so a renewal keeps its
// series.
const MaxLegacySigners = 100

// Values of the reason label of skipped learning.
const (
	SkipRateLimited = "rate_limited"
	SkipFull        = "full"
	SkipUnsupported = "unsupported"
	// SkipFirstSight: a shape not yet seen templates.learnAfter times
	// (issue 14: one-off shapes are not learned).
	SkipFirstSight = "first_sight"
)

// Values of the result label of shadow checks. A sampled check is
// skipped when no DOM worker is free (issue 14: a hit never waits for
// one); skipped over all results is the share the sampling missed.
const (
	ShadowAgree    = "agree"
	ShadowDisagree = "disagree"
	ShadowSkipped  = "skipped"
)

// ShadowResults lists the values of the result label of shadow checks.
func ShadowResults() []string {
	return []string{ShadowAgree, ShadowDisagree, ShadowSkipped}
}

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

// Values of the result label of egress requests.
const (
	EgressVerified = "verified" // the partner's response verified; the client got its plaintext
	// EgressPartnerFault: the partner answered with a SOAP Fault, passed
	// to the client (verified, or unsigned with unsignedFaults: pass).
	EgressPartnerFault = "partner_fault"
	// EgressRejected: the partner's response failed verification; the
	// client got the uniform 502 fault, never the response.
	EgressRejected = "rejected"
	// EgressSecureFailed: the client's request could not be secured
	// (not a SOAP envelope the gate accepts, already secured, no key).
	EgressSecureFailed = "secure_failed"
	// EgressPartnerError: the partner was unreachable, timed out or broke
	// off; the client got the gateway's 502 or 504 fault.
	EgressPartnerError = "partner_error"
	EgressPassed       = "passed" // no SOAP content to verify (an empty one-way reply)
)

// NoRoute is the route label of requests that matched no route.
const NoRoute = "_none"

// LatencyBuckets span 25 µs to about 10 s in factors of two: fine enough to
// see a 50 µs template fast path and coarse enough for slow backends
// (DefBuckets start at 5 ms, far too coarse for the fast path).
var LatencyBuckets = prometheus.ExponentialBucketsRange(25e-6, 13.1072, 20)

// Live reload (issue 16): whole-configuration reloads (SIGHUP, the config
// file watch) and the key material pollers of internal/reload.
const (
	// NameConfigReloads counts configuration reloads by result.
	NameConfigReloads = Namespace + "_config_reloads_total"
	// NameConfigLastReloadSuccessful is 1 when the last reload attempt
	// (or the start-up load) succeeded, 0 while the running configuration
	// is older than the file because the last attempt failed.
	NameConfigLastReloadSuccessful = Namespace + "_config_last_reload_successful"
	// NameConfigLastReloadSuccess is the Unix time of the last successful
	// load (start-up or reload) of the running configuration.
	NameConfigLastReloadSuccess = Namespace + "_config_last_reload_success_timestamp_seconds"
	// NameKeyReloadFailures counts failed reloads of key material files
	// (trust stores, decryption and signing keys, credentials), by kind.
	NameKeyReloadFailures = Namespace + "_key_reload_failures_total"
)

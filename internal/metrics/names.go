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
)

// Stages of the security pipeline, the values of the stage label.
const (
	StageGate    = "gate"    // strict XML gate (and re-gating after decryption)
	StageVerify  = "verify"  // engine work other than gate and decryption
	StageDecrypt = "decrypt" // key transport and data decryption
	StagePolicy  = "policy"  // policy check and replay store
)

// NoRoute is the route label of requests that matched no route.
const NoRoute = "_none"

// LatencyBuckets span 25 µs to about 10 s in factors of two: fine enough to
// see a 50 µs template fast path and coarse enough for slow backends
// (DefBuckets start at 5 ms, far too coarse for the fast path).
var LatencyBuckets = prometheus.ExponentialBucketsRange(25e-6, 13.1072, 20)

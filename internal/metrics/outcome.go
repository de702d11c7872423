package metrics

// Outcome is how a request ended: the closed set of values of the outcome
// label, and the reason field of the request log line.
type Outcome uint8

// Outcomes. Ok and BackendFault mean the backend's response was relayed; all
// others mean the gateway answered (or the connection was cut) itself.
const (
	Ok                    Outcome = iota // backend answered with a status below 500
	BackendFault                         // backend answered 5xx (SOAP faults travel as 500)
	MethodNotAllowed                     // not POST: 405
	UnsupportedMediaType                 // not a SOAP or MTOM content type: 415
	TooLarge                             // body over the route's maxBodyBytes: 413
	Unrouted                             // no route for the path: 404
	BadRequest                           // unreadable request body: 400
	ClientTimeout                        // body not received within timeouts.read: 408
	ClientCanceled                       // client went away before the response
	BackendUnavailable                   // backend could not be reached: 502
	BackendTimeout                       // no backend response within timeouts.backend: 504
	BackendAborted                       // backend cut its response short: connection closed
	InternalError                        // a gateway bug: 500
	SecurityRejected                     // WS-Security verification or policy failed: uniform fault
	ResponseSigningFailed                // the backend's response could not be signed or encrypted: 502 fault
	DrainCut                             // still running at shutdown.drainTimeout: 503 fault, or the connection cut
	ClientAbortedUpload                  // client closed or reset the connection mid-body: nothing to answer
	BackendStalled                       // backend body made no progress for timeouts.backendBodyIdle: 504, or the connection cut
	RateLimited                          // refused by a rate or concurrency limit (routes[].limits): 429
	numOutcomes
)

var outcomeNames = [numOutcomes]string{
	Ok:                    "ok",
	BackendFault:          "backend_fault",
	MethodNotAllowed:      "method_not_allowed",
	UnsupportedMediaType:  "unsupported_media_type",
	TooLarge:              "too_large",
	Unrouted:              "no_route",
	BadRequest:            "bad_request",
	ClientTimeout:         "client_timeout",
	ClientCanceled:        "client_canceled",
	BackendUnavailable:    "backend_unavailable",
	BackendTimeout:        "backend_timeout",
	BackendAborted:        "backend_aborted",
	InternalError:         "internal_error",
	SecurityRejected:      "security_rejected",
	ResponseSigningFailed: "response_signing_failed",
	DrainCut:              "drain_cut",
	ClientAbortedUpload:   "client_aborted_upload",
	BackendStalled:        "backend_stalled",
	RateLimited:           "rate_limited",
}

// String is the outcome's label value.
func (o Outcome) String() string {
	if o >= numOutcomes {
		return "unknown"
	}
	return outcomeNames[o]
}

// Outcomes lists every outcome, for tests and pre-initialized series.
func Outcomes() []Outcome {
	out := make([]Outcome, numOutcomes)
	for i := range out {
		out[i] = Outcome(i)
	}
	return out
}

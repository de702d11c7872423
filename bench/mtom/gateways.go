package main

import (
	"fmt"
	"path/filepath"

	"github.com/wssgw/wssgw/bench/proc"
)

// mode is one way a gateway answers: what its backend sends (kind), its
// policy's responses section (empty: not signed) and, when policy is set,
// the rest of its policy instead of require: [].
type mode struct {
	name      string
	kind      string
	responses string
	policy    string
	// request makes each request's body; nil sends downloadRequest.
	request func() ([]byte, error)
}

// body is the body of the next request to the mode's gateway.
func (m mode) body() ([]byte, error) {
	if m.request == nil {
		return []byte(downloadRequest), nil
	}
	return m.request()
}

// modes are the five gateways compared. Unsigned, the streaming ones and
// buffered-package get an MTOM package when streaming digests it as XOP,
// an SwA package in the SwA modes; buffered-package signs it with a
// standard header (XOP infoset or SwA references), the attachment spooled
// (issue 15). buffered gets the same attachment inline as base64 in one
// SOAP envelope, the form a buffered stack signs without MIME.
// streaming is streamFormat trailing (the signature's children as the
// last part); streaming-strict is the default format for a requester that
// signed with an RSA certificate (strict-xop: the signature encrypted for
// it), so its requests are signed by the demo partner.
func modes(keys string, maxSize int64, attachments string) ([]mode, error) {
	cert, err := filepath.Abs(filepath.Join(keys, "gateway.crt"))
	if err != nil {
		return nil, err
	}
	key, err := filepath.Abs(filepath.Join(keys, "gateway.key"))
	if err != nil {
		return nil, err
	}
	ca, err := filepath.Abs(filepath.Join(keys, "ca.crt"))
	if err != nil {
		return nil, err
	}
	signed, err := signedDownloads(keys)
	if err != nil {
		return nil, err
	}
	signing := fmt.Sprintf("sign: true, certFile: %q, keyFile: %q", cert, key)
	kind := kindMTOM
	if attachments != attachXOP {
		kind = kindSwA
	}
	return []mode{
		{name: "unsigned", kind: kind},
		{name: "streaming", kind: kind, responses: fmt.Sprintf("{%s, mode: streaming, streamFormat: trailing, attachments: %s}", signing, attachments)},
		{name: modeStreamingStrict, kind: kind, responses: fmt.Sprintf("{%s, mode: streaming, attachments: %s}", signing, attachments),
			policy: fmt.Sprintf("require: [signature]\n    replay: \"off\"\n    trust: {caFiles: [%q]}", ca), request: signed},
		// Room for the largest inline response and the Security header.
		{name: "buffered", kind: kindInline, responses: fmt.Sprintf("{%s, mode: buffered, maxBufferedSize: %d}", signing, inlineLen(maxSize)+1<<20)},
		{name: modeBufferedPackage, kind: kind, responses: fmt.Sprintf("{%s, mode: buffered}", signing)},
	}, nil
}

// Names of the issue 15 modes.
const (
	// modeBufferedPackage is buffered signing of the MTOM/SwA package
	// itself.
	modeBufferedPackage = "buffered-package"
	// modeStreamingStrict is streaming's default format with a signed RSA
	// requester: strict-xop.
	modeStreamingStrict = "streaming-strict"
)

// startGateway runs a gateway of mode m in front of backend: one route
// whose policy asks nothing of requests (a plain SOAP request is forwarded
// as it is) and signs responses as m says. pprof mounts the admin
// listener's profiler.
func startGateway(bin, backend string, m mode, pprof bool) (*proc.Wssgw, error) {
	responses := ""
	if m.responses != "" {
		responses = "\n    responses: " + m.responses
	}
	policy := "require: []"
	if m.policy != "" {
		policy = m.policy
	}
	return proc.Start(bin, "bench-mtom-", nil, func(string) string {
		return fmt.Sprintf(`listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0, pprof: %t}
routes:
  - {name: files, path: /files, backend: %q, policy: bench}
policies:
  bench:
    %s%s
`, pprof, backend, policy, responses)
	})
}

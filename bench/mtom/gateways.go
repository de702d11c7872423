package main

import (
	"fmt"
	"path/filepath"
)

// mode is one way a gateway answers: what its backend sends (kind) and its
// policy's responses section (empty: not signed).
type mode struct {
	name      string
	kind      string
	responses string
}

// modes are the four gateways compared. Unsigned, streaming and
// buffered-package get an MTOM package when streaming digests it as XOP,
// an SwA package in the SwA modes; buffered-package signs it with a
// standard header (XOP infoset or SwA references), the attachment spooled
// (issue 15). buffered gets the same attachment inline as base64 in one
// SOAP envelope, the form a buffered stack signs without MIME.
func modes(keys string, maxSize int64, attachments string) ([]mode, error) {
	cert, err := filepath.Abs(filepath.Join(keys, "gateway.crt"))
	if err != nil {
		return nil, err
	}
	key, err := filepath.Abs(filepath.Join(keys, "gateway.key"))
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
		{name: "streaming", kind: kind, responses: fmt.Sprintf("{%s, mode: streaming, attachments: %s}", signing, attachments)},
		// Room for the largest inline response and the Security header.
		{name: "buffered", kind: kindInline, responses: fmt.Sprintf("{%s, mode: buffered, maxBufferedSize: %d}", signing, inlineLen(maxSize)+1<<20)},
		{name: modeBufferedPackage, kind: kind, responses: fmt.Sprintf("{%s, mode: buffered}", signing)},
	}, nil
}

// modeBufferedPackage is buffered signing of the MTOM/SwA package itself.
const modeBufferedPackage = "buffered-package"

// startGateway runs a gateway of mode m in front of backend: one route
// whose policy asks nothing of requests (a plain SOAP request is forwarded
// as it is) and signs responses as m says. pprof mounts the admin
// listener's profiler.
func startGateway(bin, backend string, m mode, pprof bool) (*wssgw, error) {
	responses := ""
	if m.responses != "" {
		responses = "\n    responses: " + m.responses
	}
	return launch(bin, func(string) string {
		return fmt.Sprintf(`listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0, pprof: %t}
routes:
  - {name: files, path: /files, backend: %q, policy: bench}
policies:
  bench:
    require: []%s
`, pprof, backend, responses)
	})
}

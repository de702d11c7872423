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

// modes are the three gateways compared. Unsigned and streaming get an
// MTOM package when streaming digests it as XOP, an SwA package in the
// SwA modes. The buffered signer takes a SOAP envelope only (packages
// need streaming mode), so its backend sends the same attachment inline
// as base64, the standard form a buffered stack signs.
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
	}, nil
}

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

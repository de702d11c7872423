# wssgw — make run (demo), make test (what CI runs), make bench-proxy.
GO      ?= go
# go.mod's toolchain line names the patch release wssgw is built and tested
# with (the standard library's security fixes: govulncheck in make lint);
# auto lets an older local Go fetch it as a Go module, also where the
# environment says GOTOOLCHAIN=local.
export GOTOOLCHAIN := auto
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
GOFILES  = $(shell find . -name '*.go' -not -path './.cache/*')

.PHONY: all build build-openssl test-openssl run test fmt-check vet lint unit bench bench-proxy bench-peers bench-mtom bench-mtom-responses bench-memory bench-templates interop-wss4j clean deploy-check

all: build

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/wssgw ./cmd/wssgw

## build-openssl: the fast build for encrypted traffic: RSA private-key operations (OAEP unwrap,
## RSA 1.5, response signing) in the system's OpenSSL 3 through cgo (needs libssl-dev, pkg-config);
## bin/wssgw-openssl, linked to libcrypto.so.3 (docs/decisions.md)
build-openssl:
	CGO_ENABLED=1 $(GO) build -tags openssl -trimpath -ldflags "$(LDFLAGS)" -o bin/wssgw-openssl ./cmd/wssgw

## run: the gateway on config.example.yaml in front of the embedded demo backend
run: build
	bin/wssgw demo --config config.example.yaml

## test: formatting, vet, the linters, and every test with the race detector
test: fmt-check vet lint unit test-openssl deploy-check

fmt-check:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## lint: gofmt, staticcheck, deadcode (tools/deadcode-allow.txt), govulncheck; tools from tools/lint-tools.sh
lint: fmt-check
	bash tools/lint.sh

unit:
	$(GO) test -race -count=1 ./...

## test-openssl: vet and every test again on the OpenSSL backend (-tags openssl): the engines,
## response signing, the interop suites and the fuzz seeds get keys held by OpenSSL, and
## internal/crypto's differential tests compare it with crypto/rsa (issue 18). Without OpenSSL 3's
## development files (pkg-config, libssl-dev) it says so and skips, except under CI=true.
test-openssl:
	@if [ "$$CI" != "true" ] && ! pkg-config --exists 'libcrypto >= 3' 2>/dev/null; then \
	  echo "test-openssl: skipped: no OpenSSL 3 development files (pkg-config, libssl-dev); CI runs it"; exit 0; fi; \
	set -e; \
	echo "CGO_ENABLED=1 $(GO) vet -tags openssl ./..."; CGO_ENABLED=1 $(GO) vet -tags openssl ./...; \
	echo "CGO_ENABLED=1 $(GO) test -tags openssl -race -count=1 ./..."; CGO_ENABLED=1 $(GO) test -tags openssl -race -count=1 ./...

## bench: Go micro-benchmarks
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-proxy: wssgw vs a plain httputil.ReverseProxy, same backend and load: pass-through,
## one repeated signed message, the realistic signed mix (issue 14, replay on), and the mix
## with 10 % fresh-shape traffic (legitimate throughput removed); 9-12 minutes with the
## defaults on a busy 2-core machine, most of it signing the mix's messages (each is sent once)
BENCH_PROXY_FLAGS ?=
bench-proxy: build
	$(GO) run ./bench/proxy -wssgw bin/wssgw $(BENCH_PROXY_FLAGS)

## bench-mtom: one run of both scenarios, about 2 minutes and 8 GB of RAM: wssgw's peak RSS on
## one signed 1 GiB MTOM upload (goal <= 64 MiB); MTOM responses of 1 MiB to 1 GiB unsigned,
## signed streaming (trailing format), streaming-strict (the default for an RSA-signed request),
## signed buffered (inline base64) and the signed buffered package (TTFB, MiB/s, peak RSS and
## their ratios)
BENCH_MTOM_FLAGS ?= -scenario all -size 1GiB -sizes 1MiB,16MiB,256MiB,1GiB
bench-mtom: build
	$(GO) run ./bench/mtom -wssgw bin/wssgw $(BENCH_MTOM_FLAGS)

## bench-mtom-responses: the responses scenario alone
BENCH_MTOM_RESPONSES_FLAGS ?= -sizes 1MiB,16MiB,256MiB,1GiB
bench-mtom-responses: build
	$(GO) run ./bench/mtom -wssgw bin/wssgw -scenario responses $(BENCH_MTOM_RESPONSES_FLAGS)

## bench-templates: the template automaton on a realistic signed mix (issue 14), in-process:
## hit ratio after warm-up, templates held, µs/msg template vs floor vs DOM, goals beside them.
BENCH_TEMPLATES_FLAGS ?=
bench-templates:
	$(GO) run ./bench/templates $(BENCH_TEMPLATES_FLAGS)

## bench-memory: wssgw's peak RSS (GOMEMLIMIT as the chart sets it) with 1, 10 and 32 concurrent
## ~7 MiB signed requests, valid and tampered, while small signed requests run: against the
## memory budget and the chart's 256Mi limit (goal < 1), the 503s, the small requests served;
## about 3 minutes
BENCH_MEMORY_FLAGS ?=
bench-memory: build
	$(GO) run ./bench/memory -wssgw bin/wssgw $(BENCH_MEMORY_FLAGS)
## bench-peers: wssgw (Go and OpenSSL builds) vs Apache WSS4J vs libxmlsec1 (python-xmlsec) as
## receivers of the same WSS4J-made messages, CPU time per message (issue 18; about a minute)
BENCH_PEERS_FLAGS ?=
bench-peers:
	$(GO) run ./bench/peers $(BENCH_PEERS_FLAGS)

clean:
	rm -rf bin

## interop-wss4j: build the WSS4J peer (Maven, cached in .cache/) and run its smoke test
interop-wss4j:
	bash interop/wss4j/smoke.sh

## deploy-check: Helm chart, manifests, dashboard and alerts (tools from deploy/tools.sh)
deploy-check:
	bash deploy/check.sh

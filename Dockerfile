# wssgw container image: a static binary on an empty base, running as a
# non-root user. Build:
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) \
#                --build-arg COMMIT=$(git rev-parse --short HEAD) -t wssgw:dev .
# The chart (deploy/helm/wssgw) runs it read-only with a mounted config:
#   wssgw serve --config /etc/wssgw/config/config.yaml
# The fast build for encrypted traffic (issue 18; RSA private-key operations
# in the system's OpenSSL 3, docs/decisions.md) is the target openssl, tagged
# with the suffix -openssl that the chart's image.variant selects:
#   docker build --target openssl --build-arg VERSION=... -t wssgw:dev-openssl .

# The patch release of go.mod's toolchain line (the image sets GOTOOLCHAIN=local).
ARG GO_VERSION=1.26.10

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Modules first, so that source edits reuse the download layer.
COPY go.mod go.sum ./
RUN go mod download && go mod verify
COPY . .
# Same flags as the Makefile's build target; CGO off for a static binary.
ARG VERSION=dev
ARG COMMIT=unknown
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
RUN go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/wssgw ./cmd/wssgw \
    && /out/wssgw version \
    && mkdir -p /out/etc/ssl/certs /out/etc/wssgw /out/tmp \
    && cp /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/ \
    && echo "nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin" > /out/etc/passwd \
    && echo "nonroot:x:65532:" > /out/etc/group

# The openssl variant: cgo against Debian's libssl-dev 3.0, the same
# release the runtime stage's libssl3 has.
FROM golang:${GO_VERSION}-bookworm AS build-openssl
# Unpinned on purpose: bookworm's security updates of libssl (3.0.x) are
# wanted, and the runtime stage takes the same release.
# hadolint ignore=DL3008
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libssl-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download && go mod verify
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
ENV CGO_ENABLED=1 GOFLAGS=-buildvcs=false
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN go build -tags openssl -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/wssgw ./cmd/wssgw \
    && /out/wssgw version | grep -q 'crypto openssl'

FROM debian:bookworm-slim AS openssl
# hadolint ignore=DL3008
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libssl3 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd -g 65532 nonroot && useradd -u 65532 -g 65532 -s /sbin/nologin -d /nonexistent nonroot
COPY --from=build-openssl /out/wssgw /usr/local/bin/wssgw
USER 65532:65532
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/wssgw"]
CMD ["serve", "--config", "/etc/wssgw/config/config.yaml"]

# The default target (last): the static pure-Go image.
FROM scratch AS static
# System roots for https backends without routes[].backendTLS.caFile.
COPY --from=build /out/etc/ /etc/
COPY --from=build --chown=65532:65532 /out/tmp /tmp
COPY --from=build /out/wssgw /usr/local/bin/wssgw
USER 65532:65532
# Data plane and admin (/metrics, /healthz, /readyz).
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/wssgw"]
CMD ["serve", "--config", "/etc/wssgw/config/config.yaml"]

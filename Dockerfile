# wssgw container image: a static binary on an empty base, running as a
# non-root user. Build:
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) \
#                --build-arg COMMIT=$(git rev-parse --short HEAD) -t wssgw:dev .
# The chart (deploy/helm/wssgw) runs it read-only with a mounted config:
#   wssgw serve --config /etc/wssgw/config/config.yaml

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

FROM scratch
# System roots for https backends without routes[].backendTLS.caFile.
COPY --from=build /out/etc/ /etc/
COPY --from=build --chown=65532:65532 /out/tmp /tmp
COPY --from=build /out/wssgw /usr/local/bin/wssgw
USER 65532:65532
# Data plane and admin (/metrics, /healthz, /readyz).
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/wssgw"]
CMD ["serve", "--config", "/etc/wssgw/config/config.yaml"]

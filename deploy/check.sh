#!/usr/bin/env bash
# Checks the Kubernetes delivery offline with the tools deploy/tools.sh put in
# .cache/tools: helm lint, helm-unittest, kubeconform (Kubernetes 1.29 and
# 1.33, strict, with the ServiceMonitor/PrometheusRule schemas) including a
# negative case, promtool on the alerts and on every dashboard query, and
# wssgw validate on the configuration the chart renders; hadolint on the
# Dockerfile.
# Without the tools it skips locally and fails under CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."

T=$PWD/.cache/tools
CHART=deploy/helm/wssgw
K8S_VERSIONS="1.29.0 1.33.0"

missing=""
for f in bin/helm bin/kubeconform bin/promtool helm/plugins/unittest/untt venv/bin/python venv/bin/hadolint \
  schemas/crds/monitoring.coreos.com/servicemonitor_v1.json; do
  [ -e "$T/$f" ] || missing="$missing $f"
done
for v in $K8S_VERSIONS; do
  [ -d "$T/schemas/v$v-local-strict" ] || missing="$missing schemas/v$v-local-strict"
done
if [ -n "$missing" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "deploy check: missing tools in .cache/tools:$missing (run deploy/tools.sh)" >&2
    exit 1
  fi
  echo "skip: run deploy/tools.sh"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PATH="$T/bin:$PATH"
export HELM_PLUGINS=$T/helm/plugins HELM_CACHE_HOME=$tmp/helm/cache HELM_CONFIG_HOME=$tmp/helm/config HELM_DATA_HOME=$tmp/helm/data
PY=$T/venv/bin/python
failed=0
step() { echo "== $*"; }

step "copies in the chart are identical to deploy/prometheus and deploy/grafana"
cmp deploy/prometheus/wssgw.rules.yaml "$CHART/files/wssgw.rules.yaml"
cmp deploy/grafana/wssgw-overview.json "$CHART/files/wssgw-overview.json"

# The demo keys go into the sidecar example's created Secret.
demo_keys=(--set-file "keys[0].stringData.ca\.crt=examples/keys/ca.crt"
  --set-file "keys[0].stringData.gateway\.crt=examples/keys/gateway.crt"
  --set-file "keys[0].stringData.gateway\.key=examples/keys/gateway.key")
values_sets=(default "$CHART"/ci/*-values.yaml)
values_args() { # the helm arguments of a values set
  case $1 in
  default) ;;
  */sidecar-values.yaml) printf '%s\0' -f "$1" "${demo_keys[@]}" ;;
  *) printf '%s\0' -f "$1" ;;
  esac
}

step "hadolint Dockerfile (no container engine here: the image is not built)"
"$T/venv/bin/hadolint" Dockerfile && echo "  ok" || failed=1

step "helm lint --strict (standalone and sidecar values)"
for vs in "${values_sets[@]}"; do
  mapfile -d '' args < <(values_args "$vs")
  out=$(helm lint --strict --kube-version 1.33.0 "$CHART" "${args[@]}" 2>&1) || { echo "$out"; echo "FAIL: helm lint $vs"; failed=1; continue; }
  echo "  ok: $vs"
done

step "helm unittest"
helm unittest --strict "$CHART" || failed=1

step "helm template | kubeconform -strict (Kubernetes $K8S_VERSIONS, offline schemas)"
kubeconform_args=(-strict -summary
  -schema-location "$T/schemas/{{.NormalizedKubernetesVersion}}-local{{.StrictSuffix}}/{{.ResourceKind}}{{.KindSuffix}}.json"
  -schema-location "$T/schemas/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json")
for v in $K8S_VERSIONS; do
  mkdir -p "$tmp/render/$v"
  i=0
  for vs in "${values_sets[@]}"; do
    mapfile -d '' args < <(values_args "$vs")
    i=$((i + 1))
    helm template demo "$CHART" --namespace shop --kube-version "$v" "${args[@]}" >"$tmp/render/$v/$i-$(basename "$vs").yaml"
  done
  # The example application chart that includes the sidecar templates.
  app=$tmp/legacy-app
  rm -rf "$app" && cp -r deploy/helm/examples/legacy-app "$app" && mkdir -p "$app/charts" && cp -r "$CHART" "$app/charts/wssgw"
  helm template demo "$app" --namespace shop --kube-version "$v" >"$tmp/render/$v/example-legacy-app.yaml"
  echo "  Kubernetes $v:"
  kubeconform "${kubeconform_args[@]}" -kubernetes-version "$v" "$tmp/render/$v" || failed=1
done

step "negative case: kubeconform must reject a broken render"
# A misspelt field in an extra volume mount and in a ServiceMonitor relabeling:
# valid for the chart's schema (Kubernetes objects pass through), invalid for
# the Kubernetes and CRD schemas.
helm template demo "$CHART" --kube-version 1.33.0 \
  --set-json 'extraVolumeMounts=[{"name":"scratch","mountPathh":"/scratch"}]' \
  --set-json 'extraVolumes=[{"name":"scratch","emptyDir":{}}]' \
  --set serviceMonitor.enabled=true \
  --set-json 'serviceMonitor.relabelings=[{"sourceLabelz":["__meta_kubernetes_pod_name"]}]' >"$tmp/broken.yaml"
if out=$(kubeconform "${kubeconform_args[@]}" -kubernetes-version 1.33.0 "$tmp/broken.yaml" 2>&1); then
  echo "$out"
  echo "FAIL: kubeconform accepted the broken render"
  failed=1
else
  echo "$out" | sed 's/^/  /'
  if ! grep -q "'mountPathh' not allowed" <<<"$out" || ! grep -q "'sourceLabelz' not allowed" <<<"$out"; then
    echo "FAIL: kubeconform rejected the broken render for another reason"
    failed=1
  else
    echo "  ok: rejected as expected"
  fi
fi

step "promtool check rules / test rules"
promtool check rules deploy/prometheus/wssgw.rules.yaml || failed=1
promtool test rules deploy/prometheus/wssgw.rules.test.yaml || failed=1

step "promtool: every dashboard query parses"
# One recording rule per panel query, template variables substituted.
"$PY" - deploy/grafana/wssgw-overview.json "$tmp/dashboard.rules.yaml" <<'EOF'
import json, sys, yaml
dash = json.load(open(sys.argv[1]))
exprs = []
def walk(node):
    if isinstance(node, dict):
        if isinstance(node.get("expr"), str):
            exprs.append(node["expr"])
        for v in node.values():
            walk(v)
    elif isinstance(node, list):
        for v in node:
            walk(v)
walk(dash.get("panels", []))
subst = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}
rules = []
for i, e in enumerate(exprs):
    for k, v in subst.items():
        e = e.replace(k, v)
    for var in ("namespace", "route", "policy"):
        e = e.replace("$" + var, ".*")
    if "$" in e:
        sys.exit(f"dashboard query {i} keeps an unknown variable: {e}")
    rules.append({"record": f"dashboard:query_{i}", "expr": e})
yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, open(sys.argv[2], "w"), sort_keys=False)
print(f"  {len(rules)} queries")
EOF
promtool check rules "$tmp/dashboard.rules.yaml" || failed=1

step "wssgw validate on the rendered configuration"
go build -o "$tmp/wssgw" ./cmd/wssgw
# Render a values set, write the ConfigMap's config.yaml and the created
# Secrets' files under $tmp/<set>/etc/wssgw (as mounted in the pod) and point
# the configuration's /etc/wssgw/ paths there.
validate() {
  local name=$1
  shift
  helm template demo "$CHART" --kube-version 1.33.0 "$@" >"$tmp/$name.yaml"
  "$PY" - "$tmp/$name.yaml" "$tmp/$name" <<'EOF'
import os, sys, yaml
root = sys.argv[2]
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if not doc:
        continue
    if doc["kind"] == "ConfigMap" and "config.yaml" in doc.get("data", {}):
        cfg = doc["data"]["config.yaml"].replace("/etc/wssgw/", root + "/etc/wssgw/")
        os.makedirs(root + "/etc/wssgw/config", exist_ok=True)
        open(root + "/etc/wssgw/config/config.yaml", "w").write(cfg)
    if doc["kind"] == "Secret":
        key = doc["metadata"]["name"].removeprefix("demo-wssgw-")
        d = root + "/etc/wssgw/keys/" + key
        os.makedirs(d, exist_ok=True)
        for f, v in doc.get("stringData", {}).items():
            open(os.path.join(d, f), "w").write(v)
EOF
  if "$tmp/wssgw" validate --config "$tmp/$name/etc/wssgw/config/config.yaml"; then
    echo "  ok: $name"
  else
    echo "FAIL: wssgw validate ($name)"
    failed=1
  fi
}
validate default
validate sidecar-demo-keys -f "$CHART/ci/sidecar-values.yaml" "${demo_keys[@]}"

if [ "$failed" -ne 0 ]; then
  echo "deploy check: FAILED"
  exit 1
fi
echo "deploy check: ok"

"""Write the JSON schemas kubeconform needs to validate the chart offline.

usage: python deploy/schemas.py OUTDIR VERSION...   (e.g. 1.29.0 1.33.0)

Run by deploy/tools.sh with the interpreter of a venv that holds two PyPI
packages:

* kubernetes-validate bundles the Kubernetes OpenAPI schemas per version
  ("-local" and "-local-strict"). Their "$id" and "/api/_definitions.json"
  references do not resolve in kubeconform's compiler, so "$id" is dropped and
  the references point at the sibling _definitions.json. Output:
  OUTDIR/v<VERSION>-local[-strict]/<kind>-<group>-<version>.json.

* cloudcoil-models-prometheus-operator holds pydantic models generated from
  the prometheus-operator CRDs. The ServiceMonitor and PrometheusRule schemas
  are the models' JSON schemas, made strict (additionalProperties: false on
  every object that lists its properties) so that a misspelt field fails.
  Output: OUTDIR/crds/monitoring.coreos.com/<kind>_v1.json.
"""

import json
import pathlib
import sys

import kubernetes_validate
from cloudcoil.models.prometheus_operator import v1 as promop


def fix_k8s(node):
    if isinstance(node, dict):
        node.pop("$id", None)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("/api/_definitions.json"):
            node["$ref"] = ref[len("/api/"):]
        for v in node.values():
            fix_k8s(v)
    elif isinstance(node, list):
        for v in node:
            fix_k8s(v)


def strict(node):
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for v in node.values():
            strict(v)
    elif isinstance(node, list):
        for v in node:
            strict(v)


def main():
    out = pathlib.Path(sys.argv[1])
    versions = sys.argv[2:]
    src_root = pathlib.Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    for v in versions:
        for variant in ("local", "local-strict"):
            src = src_root / f"v{v}-{variant}"
            if not src.is_dir():
                sys.exit(f"kubernetes-validate has no schemas for {v} ({src.name})")
            dst = out / f"v{v}-{variant}"
            dst.mkdir(parents=True, exist_ok=True)
            for f in src.glob("*.json"):
                doc = json.loads(f.read_text())
                fix_k8s(doc)
                (dst / f.name).write_text(json.dumps(doc))
        print(f"schemas: Kubernetes {v}")

    crds = out / "crds" / "monitoring.coreos.com"
    crds.mkdir(parents=True, exist_ok=True)
    for kind in ("ServiceMonitor", "PrometheusRule"):
        schema = getattr(promop, kind).model_json_schema(by_alias=True, mode="validation")
        strict(schema)
        schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind", "spec"})
        (crds / f"{kind.lower()}_v1.json").write_text(json.dumps(schema))
        print(f"schemas: monitoring.coreos.com/v1 {kind}")


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# Validates the manifests of deploy/k8s against the Kubernetes API's schemas with kubeconform,
# offline but for the Go module proxy: kubeconform itself (pinned) and the Kubernetes source
# module (pinned, for its OpenAPI document, api/openapi-spec/swagger.json) come through it, once,
# into ~/.cache/monitor-k8s; openapi-to-schemas.py turns that document into kubeconform's schemas
# (strict: an unknown field is an error). KEDA's ScaledObject is validated the same way against
# the CRDs its Go module (pinned) carries in config/crd/bases, converted by crd-to-schemas.py.
# Each file is validated on its own, then what kustomize (pinned, through the same proxy) builds:
# the default kustomization, and it with the HA component (ha/: Patroni instead of the single
# TimescaleDB), checked to hold the Patroni StatefulSet and no longer the single one, and it with
# the shards component (shards/: two more TimescaleDB servers as sample shards).
# No cluster is needed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
manifests=$(cd "$here/../../../deploy/k8s" && pwd)
kubeconform_version=v0.7.0
kubernetes_version=v1.31.4
kustomize_version=v5.5.0
# KEDA 2.16 supports Kubernetes 1.29 to 1.31.
keda_version=v2.16.1
cache=${MONITOR_K8S_CACHE:-$HOME/.cache/monitor-k8s}
go=$(command -v go || echo /usr/local/go/bin/go)
[ -x "$go" ] || { echo 'go is missing (https://go.dev/dl or /usr/local/go/bin/go)' >&2; exit 1; }

bin=$cache/kubeconform-$kubeconform_version
if [ ! -x "$bin/kubeconform" ]; then
  GOBIN=$bin GOFLAGS=-mod=mod "$go" install "github.com/yannh/kubeconform/cmd/kubeconform@$kubeconform_version"
fi
kustomize_bin=$cache/kustomize-$kustomize_version
if [ ! -x "$kustomize_bin/kustomize" ]; then
  GOBIN=$kustomize_bin GOFLAGS=-mod=mod "$go" install "sigs.k8s.io/kustomize/kustomize/v5@$kustomize_version"
fi
schemas=$cache/schemas-$kubernetes_version
if [ ! -f "$schemas/deployment-apps-v1.json" ]; then
  dir=$(cd "$cache" && "$go" mod download -json "k8s.io/kubernetes@$kubernetes_version" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  python3 "$here/openapi-to-schemas.py" "$dir/api/openapi-spec/swagger.json" "$schemas.partial"
  rm -rf "$schemas" && mv "$schemas.partial" "$schemas"
fi
keda_schemas=$cache/keda-schemas-$keda_version
if [ ! -f "$keda_schemas/scaledobject-keda-v1alpha1.json" ]; then
  dir=$(cd "$cache" && "$go" mod download -json "github.com/kedacore/keda/v2@$keda_version" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  python3 "$here/crd-to-schemas.py" "$keda_schemas.partial" "$dir"/config/crd/bases/*.yaml
  rm -rf "$keda_schemas" && mv "$keda_schemas.partial" "$keda_schemas"
fi
kubeconform() {
  "$bin/kubeconform" -strict -summary -kubernetes-version "${kubernetes_version#v}" \
    -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
    -schema-location "$keda_schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$@"
}
kubeconform "$manifests/config.yaml" "$manifests/migrate.yaml" "$manifests/roles.yaml" \
  "$manifests/services.yaml" "$manifests/timescaledb.yaml" "$manifests/autoscaling.yaml" \
  "$manifests/ha/patroni.yaml" "$manifests/ha/database-url.yaml" \
  "$manifests/shards/shard-databases.yaml" "$manifests/shards/sample-shards.yaml"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo 'kustomize build deploy/k8s:'
"$kustomize_bin/kustomize" build "$manifests" >"$work/default.yaml"
kubeconform "$work/default.yaml"
# An overlay beside it (kustomize refuses a root that contains its own base) with the component.
mkdir "$work/ha"
rel=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$manifests" "$work/ha")
printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\ncomponents:\n  - %s/ha\n' \
  "$rel" "$rel" >"$work/ha/kustomization.yaml"
echo 'kustomize build deploy/k8s with the component ha:'
"$kustomize_bin/kustomize" build "$work/ha" >"$work/ha.yaml"
kubeconform "$work/ha.yaml"
statefulsets() { python3 -c 'import sys, yaml
print(" ".join(sorted(d["metadata"]["name"] for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "StatefulSet")))' "$1"; }
[ "$(statefulsets "$work/default.yaml")" = monitor-db ] || { echo 'deploy/k8s: expected the StatefulSet monitor-db' >&2; exit 1; }
[ "$(statefulsets "$work/ha.yaml")" = monitor-patroni ] || {
  echo "deploy/k8s with ha: expected only the StatefulSet monitor-patroni, got $(statefulsets "$work/ha.yaml")" >&2
  exit 1
}
# The component shards: two more TimescaleDB StatefulSets, the list in the roles' Secret, and the
# placement in an init container of every writer and evaluator pod.
mkdir "$work/shards"
rel=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$manifests" "$work/shards")
printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\ncomponents:\n  - %s/shards\n' \
  "$rel" "$rel" >"$work/shards/kustomization.yaml"
echo 'kustomize build deploy/k8s with the component shards:'
"$kustomize_bin/kustomize" build "$work/shards" >"$work/shards.yaml"
kubeconform "$work/shards.yaml"
[ "$(statefulsets "$work/shards.yaml")" = 'monitor-db monitor-db-s1 monitor-db-s2' ] || {
  echo "deploy/k8s with shards: expected monitor-db and its shards, got $(statefulsets "$work/shards.yaml")" >&2
  exit 1
}
python3 -c 'import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
secret = next(d for d in docs if d["kind"] == "Secret" and d["metadata"]["name"] == "monitor-secrets")
shards = [s["name"] for s in json.loads(secret["stringData"]["SAMPLE_SHARDS"])]
assert shards == ["s0", "s1", "s2"], shards
for name in ("monitor-writer", "monitor-evaluator"):
    deployment = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == name)
    init = [c["name"] for c in deployment["spec"]["template"]["spec"].get("initContainers", [])]
    assert init == ["place-partitions"], (name, init)
    assert [c["name"] for c in deployment["spec"]["template"]["spec"]["containers"]] == [name.split("-")[1]]
' "$work/shards.yaml" || { echo 'deploy/k8s with shards: SAMPLE_SHARDS or the placement is missing' >&2; exit 1; }

#!/usr/bin/env bash
# Validates the manifests of deploy/k8s against the Kubernetes API's schemas with kubeconform,
# offline but for the Go module proxy: kubeconform itself (pinned) and the Kubernetes source
# module (pinned, for its OpenAPI document, api/openapi-spec/swagger.json) come through it, once,
# into ~/.cache/monitor-k8s; openapi-to-schemas.py turns that document into kubeconform's schemas
# (strict: an unknown field is an error). KEDA's ScaledObject is validated the same way against
# the CRDs its Go module (pinned) carries in config/crd/bases, converted by crd-to-schemas.py.
# No cluster is needed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kubeconform_version=v0.7.0
kubernetes_version=v1.31.4
# KEDA 2.16 supports Kubernetes 1.29 to 1.31.
keda_version=v2.16.1
cache=${MONITOR_K8S_CACHE:-$HOME/.cache/monitor-k8s}
go=$(command -v go || echo /usr/local/go/bin/go)
[ -x "$go" ] || { echo 'go is missing (https://go.dev/dl or /usr/local/go/bin/go)' >&2; exit 1; }

bin=$cache/kubeconform-$kubeconform_version
if [ ! -x "$bin/kubeconform" ]; then
  GOBIN=$bin GOFLAGS=-mod=mod "$go" install "github.com/yannh/kubeconform/cmd/kubeconform@$kubeconform_version"
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
"$bin/kubeconform" -strict -summary -kubernetes-version "${kubernetes_version#v}" \
  -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
  -schema-location "$keda_schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
  "$here/config.yaml" "$here/migrate.yaml" "$here/roles.yaml" "$here/services.yaml" \
  "$here/timescaledb.yaml" "$here/autoscaling.yaml"

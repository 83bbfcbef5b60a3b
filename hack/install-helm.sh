#!/usr/bin/env bash
# Builds helm into bin/helm from source, using only Go and the Go module
# proxy (no prebuilt download). helm renders and lints charts/steward, and
# test/chart validates its output against a real kube-apiserver.
#
# helm builds from its own module in hack/tools/helm/, whose go.mod must
# require HELM_VERSION, so its dependencies never touch our go.mod. The build
# is skipped when the stamp file bin/.helm.version matches the version and
# the hash of the module files, so a second run is a no-op. A cold build
# takes a few minutes on two cores.
#
# Usage: hack/install-helm.sh
set -euo pipefail

HELM_MODULE=helm.sh/helm/v3
HELM_VERSION=v3.22.0

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/hack/tools/helm"
out="$root/bin/helm"
stamp_file="$root/bin/.helm.version"

# GOTOOLCHAIN=local: build with the installed Go, never download one.
# -mod=mod lets a fresh checkout fill in go.sum entries the build needs.
export GOTOOLCHAIN=local
export GOFLAGS=-mod=mod

required="$(awk -v m="$HELM_MODULE" '/=>/ { next } { for (i = 1; i < NF; i++) if ($i == m) { print $(i + 1); exit } }' "$dir/go.mod")"
if [[ "$required" != "$HELM_VERSION" ]]; then
  echo "hack/tools/helm/go.mod requires $HELM_MODULE ${required:-nothing}, hack/install-helm.sh pins $HELM_VERSION" >&2
  echo "fix: (cd hack/tools/helm && GOTOOLCHAIN=local go get $HELM_MODULE@$HELM_VERSION && go mod tidy)" >&2
  exit 1
fi

# Stamp what helm's own Makefile stamps: its version, and the Kubernetes
# version `helm template` and `helm lint` assume without a cluster (else
# v1.20, older than Chart.yaml's kubeVersion), taken from the client-go
# v0.X.Y it builds with as v1.X.
client_go="$(awk '$1 == "k8s.io/client-go" { print $2; exit }' "$dir/go.mod")"
kube_minor="$(echo "$client_go" | cut -d. -f2)"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
  ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$kube_minor"
done
stamp="$HELM_MODULE $HELM_VERSION $(cat "$dir/go.mod" "$dir/go.sum" <(echo "$ldflags") | sha256sum | cut -c1-16)"
if [[ -x "$out" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]]; then
  echo "helm $HELM_VERSION: up to date"
  exit 0
fi

echo "helm $HELM_VERSION: building helm.sh/helm/v3/cmd/helm"
mkdir -p "$(dirname "$out")"
start=$SECONDS
(cd "$dir" && go build -ldflags "$ldflags" -o "$out.tmp" helm.sh/helm/v3/cmd/helm)
mv -f "$out.tmp" "$out"
echo "$stamp" >"$stamp_file"
echo "helm $HELM_VERSION: built $out in $((SECONDS - start))s"

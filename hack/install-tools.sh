#!/usr/bin/env bash
# Builds the tools Steward's build and tests need into bin/, from source, using
# only Go and the Go module proxy (no prebuilt downloads):
#
#   bin/k8s/kube-apiserver, bin/k8s/etcd  envtest's KUBEBUILDER_ASSETS, and the
#                                         local control plane of `steward dev`
#   bin/k8s/kube-controller-manager,      the local control plane of `steward dev`
#   bin/k8s/kube-scheduler, bin/k8s/kwok  (Deployments get Pods on a kwok node)
#   bin/controller-gen                    `make generate` and `make manifests`
#
# Versions are pinned in hack/tools/versions.env; each tool builds from its own
# module in hack/tools/<name>/ so its dependencies never touch our go.mod.
# A tool is skipped when its stamp file (bin/.../.<tool>.version) matches the
# pinned version and the hash of its module files, so a second run is a no-op.
#
# Usage: hack/install-tools.sh [kube-apiserver|kube-controller-manager|kube-scheduler|etcd|kwok|controller-gen ...]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=tools/versions.env
source "$root/hack/tools/versions.env"
bin="$root/bin"

# GOTOOLCHAIN=local: build with the installed Go even though etcd's go.mod
# names a newer toolchain (a dependency's toolchain line is ignored; only our
# tools module's `go` line counts). -mod=mod lets a fresh checkout fill in
# go.sum entries for packages only the build needs.
export GOTOOLCHAIN=local
export GOFLAGS=-mod=mod

# required_version GOMOD MODULE prints the version GOMOD requires of MODULE.
required_version() {
  awk -v m="$2" '/=>/ { next } { for (i = 1; i < NF; i++) if ($i == m) { print $(i + 1); exit } }' "$1"
}

# stamp NAME MODULE VERSION PACKAGE OUTPUT [LDFLAGS] prints what a build of
# these arguments records: the version and a hash of the inputs that matter.
stamp() {
  local dir="$root/hack/tools/$1"
  echo "$2 $3 $(cat "$dir/go.mod" "$dir/go.sum" <(echo "$4 ${6:-}") | sha256sum | cut -c1-16)"
}

# install NAME MODULE VERSION PACKAGE OUTPUT [LDFLAGS] builds PACKAGE from
# hack/tools/NAME into OUTPUT unless its stamp says it is current.
install() {
  local name=$1 module=$2 version=$3 pkg=$4 out=$5 ldflags=${6:-}
  local dir="$root/hack/tools/$name"
  local required
  required="$(required_version "$dir/go.mod" "$module")"
  if [[ "$required" != "$version" ]]; then
    echo "hack/tools/$name/go.mod requires $module ${required:-nothing}, versions.env pins $version" >&2
    echo "fix: (cd hack/tools/$name && GOTOOLCHAIN=local go get $module@$version && go mod tidy)" >&2
    return 1
  fi

  local stamp_file
  stamp_file="$(dirname "$out")/.$(basename "$out").version"
  if [[ -x "$out" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$(stamp "$@")" ]]; then
    echo "$(basename "$out") $version: up to date"
    return 0
  fi

  echo "$(basename "$out") $version: building $pkg"
  mkdir -p "$(dirname "$out")"
  local start=$SECONDS
  (cd "$dir" && go build -ldflags "$ldflags" -o "$out.tmp" "$pkg")
  mv -f "$out.tmp" "$out"
  stamp "$@" >"$stamp_file" # after the build, which may have added go.sum lines
  echo "$(basename "$out") $version: built $out in $((SECONDS - start))s"
}

# install_kubernetes CMD builds k8s.io/kubernetes/cmd/CMD (kube-apiserver,
# kube-controller-manager or kube-scheduler) into bin/k8s/CMD. All three come
# from one module, hack/tools/kube-apiserver, at KUBE_APISERVER_VERSION, so they
# share a version and most of their build cache.
install_kubernetes() {
  local cmd=$1
  local minor=${KUBE_APISERVER_VERSION#v1.}
  minor=${minor%%.*}
  # k8s.io/kubernetes needs its staging modules replaced by their published
  # versions, v0.X.Y for v1.X.Y; a bump must move them all.
  local staging="v0.${KUBE_APISERVER_VERSION#v1.}" stale
  stale="$(grep -E '=> k8s\.io/[^ ]+ v' "$root/hack/tools/kube-apiserver/go.mod" | grep -v " $staging\$" || true)"
  if [[ -n "$stale" ]]; then
    echo "hack/tools/kube-apiserver/go.mod: staging replaces must be $staging for $KUBE_APISERVER_VERSION:" >&2
    echo "$stale" | head -n 3 >&2
    return 1
  fi
  local v=k8s.io/component-base/version
  install kube-apiserver "$KUBE_APISERVER_MODULE" "$KUBE_APISERVER_VERSION" \
    "k8s.io/kubernetes/cmd/$cmd" "$bin/k8s/$cmd" \
    "-s -w -X $v.gitVersion=$KUBE_APISERVER_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
}

install_etcd() {
  install etcd "$ETCD_MODULE" "$ETCD_VERSION" \
    go.etcd.io/etcd/server/v3 "$bin/k8s/etcd" "-s -w"
}

install_kwok() {
  install kwok "$KWOK_MODULE" "$KWOK_VERSION" \
    sigs.k8s.io/kwok/cmd/kwok "$bin/k8s/kwok" \
    "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}"
}

install_controller_gen() {
  install controller-gen "$CONTROLLER_GEN_MODULE" "$CONTROLLER_GEN_VERSION" \
    sigs.k8s.io/controller-tools/cmd/controller-gen "$bin/controller-gen"
}

tools=("$@")
echo "Tools in bin/, pinned in hack/tools/versions.env (a cold build takes about 10 minutes, mostly the Kubernetes binaries):"
if [[ ${#tools[@]} -eq 0 ]]; then
  tools=(controller-gen etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
fi
for tool in "${tools[@]}"; do
  case "$tool" in
    kube-apiserver | kube-controller-manager | kube-scheduler) install_kubernetes "$tool" ;;
    etcd) install_etcd ;;
    kwok) install_kwok ;;
    controller-gen) install_controller_gen ;;
    *) echo "unknown tool $tool (want kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kwok or controller-gen)" >&2; exit 2 ;;
  esac
done

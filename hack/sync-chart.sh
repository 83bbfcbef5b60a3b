#!/usr/bin/env bash
# Copies what charts/steward must ship verbatim from its generated or
# hand-written sources, so the chart never drifts from them:
#
#   config/crd/*.yaml          -> charts/steward/crds/
#   config/rbac/role.yaml      -> charts/steward/files/rbac/role.yaml
#                                 (the ClusterRole template reads its rules)
#   config/definitions/*.yaml  -> charts/steward/files/definitions/
#                                 (installed into systemDefinitionNamespace)
#   config/kubevela/*.yaml     -> charts/steward/files/kubevela/
#                                 (what KubeVela's CLI reads, in vela-system)
#
# `make manifests` runs it after controller-gen, so `make verify` fails when a
# copy is stale. Files removed from a source are removed from the chart.
#
# Usage: hack/sync-chart.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
chart="$root/charts/steward"

# sync SRC_DIR GLOB DEST_DIR makes DEST_DIR hold exactly SRC_DIR/GLOB.
sync() {
  local src=$1 glob=$2 dest=$3
  mkdir -p "$dest"
  local f
  for f in "$dest"/*.yaml; do
    [[ -e "$f" ]] || continue
    [[ -e "$src/$(basename "$f")" ]] || rm -f "$f"
  done
  for f in "$src"/$glob; do
    [[ -e "$f" ]] || { echo "sync-chart: nothing matches $src/$glob" >&2; exit 1; }
    cmp -s "$f" "$dest/$(basename "$f")" || cp "$f" "$dest/$(basename "$f")"
  done
}

sync "$root/config/crd" '*.yaml' "$chart/crds"
sync "$root/config/rbac" 'role.yaml' "$chart/files/rbac"
sync "$root/config/definitions" '*.yaml' "$chart/files/definitions"
sync "$root/config/kubevela" '*.yaml' "$chart/files/kubevela"

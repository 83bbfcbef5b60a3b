#!/usr/bin/env bash
# Builds KubeVela's own CLI, unchanged from its source, into bin/vela for
# `make test-vela` (test/vela), from the Go module proxy only:
#
#   github.com/oam-dev/kubevela/references/cmd/cli at VELA_VERSION below,
#   from its own module in hack/tools/vela/ (its dependency graph, some
#   280 modules, never touches Steward's go.mod).
#
# Stamped like KubeVela's release build (-X version.VelaVersion), so
# `vela version` and the CLI's own addon version check see v1.9.13.
# Skipped when bin/.vela.version matches the version and the hash of the
# module files, so a second run is a no-op. A cold build is long: about
# 3 minutes of downloads, then some 2,000 packages to compile (measured 23
# and 36 minutes on 2 cores shared with other builds); it is not part of
# `make test`.
#
# Usage: hack/install-vela.sh
set -euo pipefail

VELA_MODULE=github.com/oam-dev/kubevela
VELA_VERSION=v1.9.13

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/hack/tools/vela"
out="$root/bin/vela"
stamp_file="$root/bin/.vela.version"

# GOTOOLCHAIN=local: build with the installed Go. -mod=mod lets a fresh
# checkout fill in go.sum entries for packages only the build needs.
export GOTOOLCHAIN=local
export GOFLAGS=-mod=mod

required="$(awk -v m="$VELA_MODULE" '/=>/ { next } { for (i = 1; i < NF; i++) if ($i == m) { print $(i + 1); exit } }' "$dir/go.mod")"
if [[ "$required" != "$VELA_VERSION" ]]; then
  echo "hack/tools/vela/go.mod requires $VELA_MODULE ${required:-nothing}, install-vela.sh pins $VELA_VERSION" >&2
  echo "fix: (cd hack/tools/vela && GOTOOLCHAIN=local go get $VELA_MODULE@$VELA_VERSION && go mod tidy)" >&2
  exit 1
fi

ldflags="-s -w -X $VELA_MODULE/version.VelaVersion=$VELA_VERSION -X $VELA_MODULE/version.GitRevision=$VELA_VERSION"
stamp="$VELA_MODULE $VELA_VERSION $(cat "$dir/go.mod" "$dir/go.sum" <(echo "$ldflags") | sha256sum | cut -c1-16)"
if [[ -x "$out" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]]; then
  echo "vela $VELA_VERSION: up to date"
  exit 0
fi

echo "vela $VELA_VERSION: building $VELA_MODULE/references/cmd/cli (cold: 20 minutes or more)"
mkdir -p "$root/bin"
start=$SECONDS
(cd "$dir" && go build -ldflags "$ldflags" -o "$out.tmp" "$VELA_MODULE/references/cmd/cli")
mv -f "$out.tmp" "$out"
# After the build, which may have added go.sum lines.
stamp="$VELA_MODULE $VELA_VERSION $(cat "$dir/go.mod" "$dir/go.sum" <(echo "$ldflags") | sha256sum | cut -c1-16)"
echo "$stamp" >"$stamp_file"
echo "vela $VELA_VERSION: built $out in $((SECONDS - start))s"

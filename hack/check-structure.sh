#!/usr/bin/env bash
# Fails when a Go product file (not a test, not generated) is over 600
# lines, or a package holds over 25 product files or 5,000 lines of them:
# past that a file or a package is two, and should be split by concern.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

max_file=600 max_files=25 max_lines=5000
# Packages allowed over max_lines, each with its own ceiling: it may
# shrink, never grow. None today; add one only with the issue that splits it.
declare -A ceiling=()
status=0
dirs="$( { go list -f '{{.Dir}}' ./...; go -C bench list -f '{{.Dir}}' ./...; go -C hack/tools/image list -f '{{.Dir}}' ./...; } | sort -u)"
for dir in $dirs; do
  files=()
  for f in "$dir"/*.go; do
    [[ -e "$f" && "$f" != *_test.go ]] || continue
    # Generated code (deepcopy) is not written by hand.
    head -n 20 "$f" | grep -q '^// Code generated .* DO NOT EDIT\.$' && continue
    files+=("$f")
  done
  (( ${#files[@]} )) || continue
  rel="${dir#"$PWD"/}"
  total=0
  for f in "${files[@]}"; do
    n=$(wc -l <"$f")
    total=$((total + n))
    if (( n > max_file )); then
      echo "$rel/$(basename "$f"): $n lines, over $max_file: split it by concern"
      status=1
    fi
  done
  if (( ${#files[@]} > max_files )); then
    echo "$rel: ${#files[@]} product files, over $max_files: split the package"
    status=1
  fi
  limit=${ceiling[$rel]:-$max_lines}
  if (( total > limit )); then
    echo "$rel: $total lines of product files, over $limit: split the package"
    status=1
  fi
done
exit $status

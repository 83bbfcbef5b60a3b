#!/usr/bin/env bash
# Fails when a Go package of the root or the bench module has no doc.go,
# when its doc.go has no package comment ("// Package <name> ...", or
# "// Command <name> ..." for a main package), or when that comment does
# not name one of the package's product (non-test) .go files: every
# package says what it is for and maps its files, so a reader can guess
# where a thing lives before opening a file (docs/development.md, "Package
# layout"). A file is named when doc.go holds its base name, such as
# "render.go", not as part of a longer name. The other way round, each
# entry of a "Files:" map ("//<tab>name.go  what it holds") must be a file
# of the package, so that a map does not outlive a move.
#
# `make lint` (and so `make verify` and CI) runs it over every package.
#
# Usage: hack/check-docmap.sh [DIR...]
#   DIR limits the check to the packages in or under DIR (relative to the
#   repository root, such as internal/readmodel or bench).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
export GOTOOLCHAIN=local

# The files of each package as "dir|name|file file ...": the files of
# every build configuration (a foo_windows.go is a product file too).
list='{{.Dir}}|{{.Name}}|{{join .GoFiles " "}} {{join .CgoFiles " "}} {{join .IgnoredGoFiles " "}}'
packages="$(go list -e -f "$list" ./... && go -C bench list -e -f "$list" ./...)"

selected() {
	local rel="$1"
	(($# > 1)) || return 0
	shift
	for d in "$@"; do
		d="${d%/}"
		[[ "$rel" == "$d" || "$rel" == "$d"/* ]] && return 0
	done
	return 1
}

failures=0
fail() {
	echo "$1"
	failures=$((failures + 1))
}

while IFS='|' read -r dir name files; do
	rel="${dir#"$root"/}"
	selected "$rel" "$@" || continue
	doc="$dir/doc.go"
	if [[ ! -f "$doc" ]]; then
		fail "$rel: no doc.go (say what the package is for, show its use, and name each of its files)"
		continue
	fi
	word=Package
	[[ "$name" == main ]] && word=Command
	if ! grep -Eq "^// ($word [A-Za-z0-9_]+|Package [A-Za-z0-9_]+)( |\$)" "$doc"; then
		fail "$rel/doc.go: no package comment (\"// $word <name> ...\")"
	fi
	for f in $files; do
		[[ "$f" == doc.go || "$f" == *_test.go ]] && continue
		base="${f%.go}"
		if ! grep -Eq "(^|[^A-Za-z0-9_./-])${base//./\\.}\\.go([^A-Za-z0-9_]|\$)" "$doc"; then
			fail "$rel/doc.go does not name $f: add it to the file map with what it holds"
		fi
	done
	# The other way round: each entry of a "Files:" map ("//<tab>name.go  what
	# it holds") names a file of the package, so a map does not outlive a
	# move.
	while read -r listed; do
		[[ -e "$dir/$listed" ]] || fail "$rel/doc.go maps $listed, which is not in the package: drop or rename it"
	done < <(awk '/^\/\/ (# )?Files/ { inmap = 1; next }
		inmap && /^\/\/\t[A-Za-z0-9_.-]+\.go( |$)/ { sub(/^\/\/\t/, ""); print $1; next }
		inmap && !/^\/\/$/ && !/^\/\/\t/ { inmap = 0 }' "$doc")
done <<<"$packages"

if ((failures > 0)); then
	echo "check-docmap: $failures problem(s). Every package has a doc.go whose comment says what the package is for and maps every product file (see internal/readmodel/doc.go)." >&2
	exit 1
fi

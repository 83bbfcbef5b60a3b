#!/usr/bin/env bash
# Fails when git tracks a built binary or a file too large to belong in a
# clone: an executable or object file (ELF, Mach-O, PE/COFF, WebAssembly)
# or anything over 5 MB. Nothing built lands in the tree: `make build`
# writes bin/, tests write _output/, and both are ignored (.gitignore).
# Images and other small binary data (docs/img/*.png) are fine.
#
# `make verify` (and so CI) runs it. It reads the files as they are in the
# work tree, so it also catches a binary staged for the next commit.
#
# Usage: hack/check-no-binaries.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

max_bytes=$((5 * 1000 * 1000))
problems=()

# sizes prints "SIZE PATH" for each tracked file present in the work tree
# (one that is deleted or moved there is skipped), in one stat call.
sizes() {
	if stat -c '%s %n' /dev/null >/dev/null 2>&1; then
		git ls-files -z | xargs -0 stat -L -c '%s %n' 2>/dev/null || true
	else # BSD stat
		git ls-files -z | xargs -0 stat -L -f '%z %N' 2>/dev/null || true
	fi
}
while read -r size f; do
	if ((size > max_bytes)); then
		problems+=("$f: $((size / 1000000)) MB, over the 5 MB a tracked file may have")
	fi
done < <(sizes)

# Only files git does not take for text can be executables: git grep -I
# skips binary files, so a tracked file it does not list as text is binary
# (or empty). Their first bytes say what they are.
declare -A is_text=()
while IFS= read -r f; do is_text["$f"]=1; done < <(git grep -I -l -e '' -- . 2>/dev/null || true)

# magic FILE prints the first 4 bytes of FILE as hex.
magic() { head -c 4 -- "$1" | od -An -tx1 | tr -d ' \n'; }

while IFS= read -r -d '' f; do
	[[ -n "${is_text[$f]:-}" || ! -f "$f" ]] && continue
	case "$(magic "$f")" in
	7f454c46) problems+=("$f: an ELF executable or object file") ;;
	feedface | feedfacf | cefaedfe | cffaedfe) problems+=("$f: a Mach-O executable") ;;
	cafebabe | bebafeca) problems+=("$f: a Mach-O universal binary (or a Java class file)") ;;
	0061736d) problems+=("$f: a WebAssembly module") ;;
	4d5a*) problems+=("$f: a Windows (PE/COFF) executable") ;;
	esac
done < <(git ls-files -z)

if ((${#problems[@]} > 0)); then
	printf '%s\n' "${problems[@]}"
	echo "check-no-binaries: git tracks ${#problems[@]} built or oversized file(s). Remove them with 'git rm --cached <file>' and ignore them (.gitignore): build output goes to bin/ or _output/, never into the tree." >&2
	exit 1
fi

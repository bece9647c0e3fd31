#!/usr/bin/env bash
# fuzz.sh runs every fuzz target of the module (func FuzzXxx in a _test.go file)
# with `go test -fuzz`, one after another, each for FUZZTIME (default 30s).
# New inputs that widen coverage land in the Go build cache; inputs that fail
# are written to the package's testdata/fuzz/FuzzXxx, where `go test` (and so
# scripts/test.sh) replays them from then on: commit them with the fix.
#
#   scripts/fuzz.sh                      # every target, 30 s each
#   FUZZTIME=5m scripts/fuzz.sh          # longer
#   scripts/fuzz.sh ./internal/...       # the targets of some packages only
#   scripts/fuzz.sh -list                # list the targets and stop
#
# Fuzz targets need no server: the ones of packages that also hold DynamoDB
# Local tests run without them (-run '^$').
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime=${FUZZTIME:-30s}

list=false
pkgs=()
for a in "$@"; do
	case $a in
	-list) list=true ;;
	*) pkgs+=("$a") ;;
	esac
done
if ((${#pkgs[@]} == 0)); then pkgs=(./...); fi

# Each line: <package dir> <target>.
targets=$(go list -f '{{.Dir}}' "${pkgs[@]}" | while read -r dir; do
	grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed "s|^func |$dir |" || true
done)
if [[ -z $targets ]]; then
	echo "fuzz.sh: no fuzz targets in ${pkgs[*]}" >&2
	exit 1
fi
if $list; then
	echo "$targets" | sed "s|^$PWD|.|"
	exit 0
fi

n=0
failed=()
while read -r dir target; do
	rel=${dir/#$PWD/.}
	echo "==> $rel $target ($fuzztime)" >&2
	if ! go test "$rel" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" >/tmp/fuzz.$$.out 2>&1; then
		cat /tmp/fuzz.$$.out >&2
		failed+=("$rel $target")
	else
		grep "fuzz: elapsed" /tmp/fuzz.$$.out | tail -n 1 >&2 || true
	fi
	n=$((n + 1))
done <<<"$targets"
rm -f /tmp/fuzz.$$.out
if ((${#failed[@]})); then
	echo "fuzz.sh: FAIL: ${failed[*]} (failing inputs are in the package's testdata/fuzz)" >&2
	exit 1
fi
echo "fuzz.sh: PASS ($n targets, $fuzztime each)"

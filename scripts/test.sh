#!/usr/bin/env bash
# test.sh is the project's test command; CI runs it through .ci/run.
#
#   scripts/test.sh          # everything: gofmt, go vet, staticcheck, go test -race ./...
#                            # (and go vet, go test -race in the module benchmarks/peers;
#                            # GOARCH=386: the build, and the pure packages' tests)
#   scripts/test.sh --fast   # the edit-test loop: go test ./... only (no race detector, no lint)
#
# It installs DynamoDB Local (unless DYNAMODB_ENDPOINT names a server to use
# instead), then checks formatting (gofmt), runs go vet and staticcheck, and runs
# every test with the race detector. Fuzz targets run their seed corpora
# (testdata/fuzz) as ordinary tests; scripts/fuzz.sh fuzzes.
#
# Each stage is announced as it starts and timed when it ends ("==> ... (12 s)"),
# and while `go test` runs a line every minute says it still does, so that a
# long run is never silent.
#
# Without DYNAMODB_ENDPOINT, the tests of all packages share one DynamoDB Local,
# started by dynamotest/cmd/dynamodb-local around `go test` and stopped after it
# (rather than one server per package). DYNAMODB_LOCAL_DIR picks the
# installation, and so the version, as for dynamotest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# staticcheck 2026.2.2: a release that supports Go 1.26 (checked with go1.26.8).
readonly staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2
readonly test_timeout=30m

fast=false
case ${1:-} in
"") ;;
--fast) fast=true ;;
*)
	echo "usage: scripts/test.sh [--fast]" >&2
	exit 2
	;;
esac

step="start"
tmp=""
ticker=""
started=$SECONDS
stage_start=$SECONDS
on_exit() {
	local rc=$?
	if [[ -n $ticker ]]; then kill "$ticker" 2>/dev/null || true; fi
	if [[ -n $tmp ]]; then rm -rf "$tmp"; fi
	if ((rc != 0)); then
		echo "test.sh: FAIL at step \"$step\" (exit $rc) after $((SECONDS - started)) s" >&2
	fi
}
trap on_exit EXIT

# begin ends the running stage (printing its time) and announces the next.
begin() {
	if [[ $step != start ]]; then
		echo "    $step: $((SECONDS - stage_start)) s" >&2
	fi
	step=$1
	stage_start=$SECONDS
	echo "==> $step" >&2
}

# heartbeat prints a line a minute while the stage it was started in runs.
heartbeat() {
	local what=$1 n=0 s=""
	# The sleep dies with the heartbeat, so that nothing holds the output open.
	trap 'if [[ -n $s ]]; then kill "$s" 2>/dev/null; fi; exit 0' TERM
	while :; do
		sleep 60 &
		s=$!
		wait "$s"
		n=$((n + 1))
		echo "    ... $what still running ($n min)" >&2
	done
}

# room gives the Go build cache room: a cold run writes about 3.5 GB to it
# (3.4 GB measured), and a disk with less than 5 GB free has been seen to
# fail the run half-way ("no space left on device"). On such a disk the
# cache, the go command's and the tests' temporary files (and, under 1 GB
# free, the module cache) go to /dev/shm, in memory, when it has the room.
# TEST_SH_MIN_FREE_KB changes the 5 GB, to try this out.
room() {
	local need=${TEST_SH_MIN_FREE_KB:-5242880} cache free shm
	cache=$(go env GOCACHE)
	mkdir -p "$cache"
	free=$(df -Pk "$cache" | awk 'NR == 2 { print $4 }')
	if ((free >= need)); then return; fi
	shm=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
	if [[ -z $shm ]] || ((shm < 8388608)); then # the cache, the test binaries and DynamoDB Local's memory
		echo "test.sh: warning: $((free / 1024)) MB free for the Go build cache $cache; a cold run needs about 3.5 GB" >&2
		return
	fi
	export GOCACHE=/dev/shm/ddbkit/go-build GOTMPDIR=/dev/shm/ddbkit/go-tmp TMPDIR=/dev/shm/ddbkit/tmp
	if ((free < 1048576)); then export GOMODCACHE=/dev/shm/ddbkit/go-mod; fi
	mkdir -p "$GOCACHE" "$GOTMPDIR" "$TMPDIR" ${GOMODCACHE:+"$GOMODCACHE"}
	echo "test.sh: $((free / 1024)) MB free for $cache: the Go build cache and temporary files are in /dev/shm/ddbkit" >&2
}
room

begin "install DynamoDB Local"
if [[ -n ${DYNAMODB_ENDPOINT:-} ]]; then
	echo "DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT: not installing DynamoDB Local" >&2
else
	dir=$(bash scripts/install-dynamodb-local.sh | tail -n 1)
	echo "DynamoDB Local is in $dir" >&2
fi

race=(-race)
if ! $fast; then
	begin "gofmt"
	unformatted=$(gofmt -l .)
	if [[ -n $unformatted ]]; then
		echo "these files are not gofmt-formatted (run gofmt -w on them):" >&2
		echo "$unformatted" >&2
		exit 1
	fi

	# vet and staticcheck compile what they check with -race, as go test does
	# below, so that the test stage finds every package built already: each
	# package is compiled once for the checks and the tests, not twice.
	begin "go vet"
	go vet -race ./...

	begin "staticcheck"
	tmp=$(mktemp -d)
	GOBIN="$tmp" go install "$staticcheck"
	GOFLAGS="${GOFLAGS:+$GOFLAGS }-race" "$tmp/staticcheck" ./...

	# On 32-bit platforms int is 32 bits: the library must build there, and
	# its pure logic (numbers, codecs, expressions) must hold where the
	# exponents and sizes it handles do not fit an int. The tests run where
	# this machine can run 386 binaries (most amd64 Linux kernels can).
	begin "32-bit: GOARCH=386 go build ./... and the pure packages' tests"
	GOARCH=386 go build ./...
	pure=(./internal/av ./internal/codec ./internal/condexpr ./internal/ident ./internal/itemstate)
	if GOARCH=386 go test -count=1 -run '^$' ./internal/ident >/dev/null 2>&1; then
		GOARCH=386 go test -count=1 "${pure[@]}"
	else
		echo "this machine cannot run 386 binaries: the 32-bit tests are not run (the build is checked)" >&2
	fi
else
	race=()
fi

begin "go test ${race[*]} ./..."
heartbeat "go test" &
ticker=$!
if [[ -n ${DYNAMODB_ENDPOINT:-} ]]; then
	go test "${race[@]}" -count=1 -timeout "$test_timeout" ./...
else
	# A built binary, not `go run`: the server must die with the process that
	# runs go test, and `go run` would stand between them.
	tmp=${tmp:-$(mktemp -d)}
	go build -o "$tmp/dynamodb-local" ./dynamotest/cmd/dynamodb-local
	"$tmp/dynamodb-local" -- go test "${race[@]}" -count=1 -timeout "$test_timeout" ./...
fi
kill "$ticker" 2>/dev/null || true
ticker=""

# benchmarks/peers is a module of its own (it requires the peer libraries it
# compares with), so ./... above leaves it out: its tests (that the mapper and
# the code it is compared with send the same requests) run here. They need no
# server.
begin "benchmarks/peers: go test ${race[*]}"
(
	cd benchmarks/peers
	if ! $fast; then go vet ./...; fi
	go test "${race[@]}" -count=1 ./...
)

begin "done"
if $fast; then
	echo "test.sh: PASS (--fast: go test ./..., no race detector, no lint) in $((SECONDS - started)) s"
else
	echo "test.sh: PASS (gofmt, go vet, staticcheck, go test -race ./...) in $((SECONDS - started)) s"
fi

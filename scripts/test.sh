#!/usr/bin/env bash
# test.sh is the project's test command; CI runs it through .ci/run.
#
# It installs DynamoDB Local (unless DYNAMODB_ENDPOINT names a server to use
# instead), then checks formatting (gofmt), runs go vet and staticcheck, and runs
# every test with the race detector. Fuzz targets run their seed corpora
# (testdata/fuzz) as ordinary tests; nothing here fuzzes.
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

step="start"
tmp=""
on_exit() {
	local rc=$?
	if [[ -n $tmp ]]; then rm -rf "$tmp"; fi
	if ((rc != 0)); then
		echo "test.sh: FAIL at step \"$step\" (exit $rc)" >&2
	fi
}
trap on_exit EXIT

begin() {
	step=$1
	echo "==> $step" >&2
}

begin "install DynamoDB Local"
if [[ -n ${DYNAMODB_ENDPOINT:-} ]]; then
	echo "DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT: not installing DynamoDB Local" >&2
else
	dir=$(bash scripts/install-dynamodb-local.sh | tail -n 1)
	echo "DynamoDB Local is in $dir" >&2
fi

begin "gofmt"
unformatted=$(gofmt -l .)
if [[ -n $unformatted ]]; then
	echo "these files are not gofmt-formatted (run gofmt -w on them):" >&2
	echo "$unformatted" >&2
	exit 1
fi

begin "go vet"
go vet ./...

begin "staticcheck"
go run "$staticcheck" ./...

begin "go test"
if [[ -n ${DYNAMODB_ENDPOINT:-} ]]; then
	go test -race -count=1 -timeout "$test_timeout" ./...
else
	# A built binary, not `go run`: the server must die with the process that
	# runs go test, and `go run` would stand between them.
	tmp=$(mktemp -d)
	go build -o "$tmp/dynamodb-local" ./dynamotest/cmd/dynamodb-local
	"$tmp/dynamodb-local" -- go test -race -count=1 -timeout "$test_timeout" ./...
fi

step="done"
echo "test.sh: PASS (gofmt, go vet, staticcheck, go test -race ./...)"

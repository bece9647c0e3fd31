#!/usr/bin/env bash
# test.sh is the project's test command; CI runs it through .ci/run.
#
# It installs DynamoDB Local (unless DYNAMODB_ENDPOINT names a server to use
# instead), then checks formatting (gofmt), runs go vet and staticcheck, and runs
# every test with the race detector. Fuzz targets run their seed corpora
# (testdata/fuzz) as ordinary tests; nothing here fuzzes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# staticcheck 2026.2.2: a release that supports Go 1.26 (checked with go1.26.8).
readonly staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2
readonly test_timeout=30m

step="start"
on_exit() {
	local rc=$?
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
go test -race -count=1 -timeout "$test_timeout" ./...

step="done"
echo "test.sh: PASS (gofmt, go vet, staticcheck, go test -race ./...)"

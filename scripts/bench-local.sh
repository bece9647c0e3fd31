#!/usr/bin/env bash
# bench-local.sh measures the mapper against DynamoDB Local (or
# DYNAMODB_ENDPOINT): Save throughput versus the SDK sending the same
# conditional request, and contended Update goodput versus a hand-written
# loop that re-reads on conflict. The test binary runs ROUNDS times (each
# round runs every impl once; even rounds run the baseline first); results in
# /tmp/bench-local.txt, compared by benchstat per sub-benchmark (impl=...).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly benchstat=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
rounds=${ROUNDS:-6}
if [[ -z ${DYNAMODB_ENDPOINT:-} ]]; then
	bash scripts/install-dynamodb-local.sh >/dev/null
fi
bin=$(mktemp -d)/integration.test
go test -c -o "$bin" ./integration/
: >/tmp/bench-local.txt
for ((i = 1; i <= rounds; i++)); do
	order=()
	if ((i % 2 == 0)); then order=(-bench.baselinefirst); fi
	(cd integration && "$bin" -test.run '^$' -test.bench "${BENCH:-SaveThroughput|ContendedUpdate}" \
		-test.benchtime "${BENCHTIME:-2s}" -test.count 1 "${order[@]}") | tee -a /tmp/bench-local.txt
done
go run "$benchstat" -col /impl /tmp/bench-local.txt

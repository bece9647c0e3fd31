#!/usr/bin/env bash
# Reproduces BENCHMARKS.md, "Telemetry": (1) Save, SavePut and Load with
# telemetry off, against the code before telemetry (BASE, default 152ed01),
# the two test binaries run alternately, -count 1 each round, so that drift
# in machine load hits both sides alike; (2) BenchmarkTelemetry: the same
# calls with telemetry off and recording (the OpenTelemetry SDK sampling
# every span, no exporter; a manual metric reader).
#
# Usage: scripts/bench-telemetry.sh                 # 5 rounds
#        COUNT=10 BASE=<rev> scripts/bench-telemetry.sh
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-5}
base=${BASE:-152ed01}
benchstat=${BENCHSTAT:-golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
git archive "$base" | tar -x -C "$tmp/src"
(cd "$tmp/src" && go test -c -vet=off -o "$tmp/base.test" .)
go test -c -vet=off -o "$tmp/new.test" .
bench='^Benchmark(Save|SavePut|Load)$'
for ((i = 1; i <= count; i++)); do
	if ((i % 2)); then order="base new"; else order="new base"; fi
	for side in $order; do
		"$tmp/$side.test" -test.run '^$' -test.bench "$bench" -test.benchmem -test.count 1 >>"$tmp/$side.txt"
	done
	"$tmp/new.test" -test.run '^$' -test.bench '^BenchmarkTelemetry$' -test.benchmem -test.count 1 >>"$tmp/tel.txt"
done
go run "$benchstat" base="$tmp/base.txt" new="$tmp/new.txt"
go run "$benchstat" -col /telemetry "$tmp/tel.txt"

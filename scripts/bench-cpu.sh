#!/usr/bin/env bash
# Reproduces BENCHMARKS.md, "Mapper vs hand-written SDK code (stub client, no
# network)": CPU and allocations per Save (UpdateItem), SavePut (PutItem) and
# Load (GetItem), the mapper against hand-written attributevalue + expression
# code sending the same request to an in-process stub client (bench_test.go).
#
# Usage: scripts/bench-cpu.sh                 # 10 rounds, raw results in /tmp/bench.txt
#        COUNT=20 OUT=my.txt scripts/bench-cpu.sh
#
# Each round is one process running every benchmark once (-count 1), the two
# implementations back to back; odd rounds run the mapper first, even rounds
# the hand-written code (-dynamo.handfirst). `go test -count 10` would instead
# run ten mapper runs, then ten hand-written ones, and any drift in machine
# load between the two blocks would show up as a difference.
#
# benchstat's "vs base" column is the mapper relative to the hand-written code
# (the base): -60% means the mapper takes 0.40x the hand-written time.
set -euo pipefail
cd "$(dirname "$0")/.."

count=${COUNT:-10}
out=${OUT:-/tmp/bench.txt}
# Pinned so that the table format does not change under us; any version works.
benchstat=${BENCHSTAT:-golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da}

bin=$(mktemp -d)/dynamo.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" .

# First check that both sides send the same request.
"$bin" -test.run '^TestBench' -test.count 1

: >"$out"
for ((i = 1; i <= count; i++)); do
	handfirst=false
	if ((i % 2 == 0)); then handfirst=true; fi
	"$bin" -test.run '^$' -test.bench '^Benchmark(Save|SavePut|Load)$' -test.benchmem -test.count 1 \
		-dynamo.handfirst="$handfirst" | tee -a "$out"
done
echo
go run "$benchstat" -col '/impl@(handwritten mapper)' "$out"

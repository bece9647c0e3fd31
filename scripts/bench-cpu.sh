#!/usr/bin/env bash
# Reproduces BENCHMARKS.md, "Mapper vs hand-written SDK code (stub client, no
# network)": CPU and allocations per Save (UpdateItem), SavePut (PutItem) and
# Load (GetItem), the mapper against hand-written attributevalue + expression
# code sending the same request to an in-process stub client (bench_test.go).
#
# Usage: scripts/bench-cpu.sh            # -count 10, raw results in /tmp/bench.txt
#        COUNT=20 OUT=my.txt scripts/bench-cpu.sh
#
# benchstat's "vs base" column is the mapper relative to the hand-written code
# (the base): -60% means the mapper takes 0.40x the hand-written time.
set -euo pipefail
cd "$(dirname "$0")/.."

count=${COUNT:-10}
out=${OUT:-/tmp/bench.txt}
# Pinned so that the table format does not change under us; any version works.
benchstat=${BENCHSTAT:-golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da}

# The check that both sides send the same request runs first.
go test -run '^TestBench' -count 1 .
go test -run '^$' -bench '^Benchmark(Save|SavePut|Load)$' -benchmem -count "$count" . | tee "$out"
echo
go run "$benchstat" -col '/impl@(handwritten mapper)' "$out"

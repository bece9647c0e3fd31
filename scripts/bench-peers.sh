#!/usr/bin/env bash
# Reproduces BENCHMARKS.md, "Peers: client CPU and allocations": a versioned
# put and a load of one 12-attribute item, this mapper against hand-written
# attributevalue + expression code and guregu/dynamo (v2), all sending the
# same request to one in-process stub client (benchmarks/peers/cpu_test.go).
# guregu/dynamo is a dependency of the nested module benchmarks/peers only,
# never of the library.
#
# Usage: scripts/bench-peers.sh                 # 12 rounds; raw results in /tmp/bench-peers.txt
#        COUNT=20 OUT=my.txt scripts/bench-peers.sh
#
# Each round is one process running every benchmark once (-count 1), the three
# implementations back to back; round i rotates their order by i places
# (-peers.order), so each runs first, second and third equally often and
# drift in machine load does not favour one. benchstat then compares the
# columns with the hand-written code as the base: "vs base" -35% means 0.65x
# the hand-written time. Besides sec/op (wall time) it shows cpu-sec/op, the
# process's CPU time per call, which time spent waiting for a core on a busy
# machine does not inflate.
set -euo pipefail
cd "$(dirname "$0")/../benchmarks/peers"

count=${COUNT:-12}
out=${OUT:-/tmp/bench-peers.txt}
benchtime=${BENCHTIME:-1s}
# Pinned so that the table format does not change under us; any version works.
benchstat=${BENCHSTAT:-golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da}

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bin=$dir/peers.test
go test -c -o "$bin" .

# First check that the three send the same request.
"$bin" -test.run '^TestPeers' -test.count 1

: >"$out"
for ((i = 0; i < count; i++)); do
	"$bin" -test.run '^$' -test.bench '^Benchmark(Put|Load)$' -test.benchmem -test.count 1 \
		-test.benchtime "$benchtime" -peers.order "$i" | tee -a "$out"
done
echo
go run "$benchstat" -col '/impl@(handwritten mapper guregu)' "$out"

#!/usr/bin/env bash
# Reproduces BENCHMARKS.md, "Peers on DynamoDB Local": sequential versioned
# saves/s and 16-writer goodput/s on one hot item, on one DynamoDB Local and
# one table, for this mapper, a raw SDK loop (benchmarks/peers/local), Java's
# DynamoDBMapper (SDK v1) and the Java v2 Enhanced Client
# (benchmarks/java/Bench.java, compiled here against the Java SDK jars
# DynamoDB Local ships).
#
# Usage: scripts/bench-peers-local.sh            # 5 rounds of 3 s runs; raw output in /tmp/bench-peers-local.txt
#        ROUNDS=8 SECONDS_PER_RUN=5 OUT=my.txt scripts/bench-peers-local.sh
#
# Uses DYNAMODB_ENDPOINT when set, otherwise starts one DynamoDB Local for
# the whole run (and stops it at the end). Needs a JDK 17+ (javac, java).
# Every implementation first warms up (WARMUP seconds per measure, 30 by
# default: the JVMs' JIT needs them), then each round runs every
# implementation once per measure, in an order rotated by one per round.
set -euo pipefail
cd "$(dirname "$0")/../benchmarks/peers"

out=${OUT:-/tmp/bench-peers-local.txt}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

go build -o "$dir/local" ./local
lib=$("$dir/local" -print-java-lib)
javac -proc:none -nowarn -encoding UTF-8 -cp "$lib/*" -d "$dir/classes" ../java/Bench.java

"$dir/local" -java-classes "$dir/classes" -java-lib "$lib" \
	-rounds "${ROUNDS:-5}" -seconds "${SECONDS_PER_RUN:-3}" -warmup "${WARMUP:-30}" -workers "${WORKERS:-16}" | tee "$out"

#!/usr/bin/env bash
# faults.sh runs the fault suite (integration tests named TestFaults*) for
# several seeds at a larger scale than the regular test run, with the race
# detector, and prints one FAULTS line per test and seed: operations tried,
# acknowledged, anomalies found, and the faults injected; and the LINEAR
# lines of the histories checked with porcupine. RELIABILITY.md quotes its
# output.
#
#   scripts/faults.sh                 # seeds 1..5, scale 3
#   SEEDS="7 8" SCALE=1 scripts/faults.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seeds=${SEEDS:-1 2 3 4 5}
scale=${SCALE:-3}
if [[ -z ${DYNAMODB_ENDPOINT:-} ]]; then
	bash scripts/install-dynamodb-local.sh >/dev/null
fi
bin=$(mktemp -d)/integration.test
go test -race -c -o "$bin" ./integration/
out=$(mktemp)
status=0
for seed in $seeds; do
	(cd integration && "$bin" -test.run '^TestFaults' -test.count 1 -test.v -test.timeout 30m \
		-faults.seed "$seed" -faults.scale "$scale") >"$out" 2>&1 || status=$?
	grep -E 'FAULTS|LINEAR|^(--- )?FAIL|panic:' "$out" | sed 's/^ *//' || true
	if ((status != 0)); then
		echo "faults.sh: seed $seed failed; full output in $out" >&2
		exit "$status"
	fi
done
echo "faults.sh: PASS (seeds: $seeds; scale $scale)"

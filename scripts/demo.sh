#!/usr/bin/env bash
# demo.sh runs the tour of the library (examples/tour) against DynamoDB Local,
# installing it first if needed; the tour starts and stops the server itself.
# Set DYNAMODB_ENDPOINT to run it against another server. Arguments are passed
# to the tour.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ -z ${DYNAMODB_ENDPOINT:-} ]]; then
	bash scripts/install-dynamodb-local.sh >/dev/null
fi
exec go run ./examples/tour "$@"

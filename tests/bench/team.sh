#!/usr/bin/env bash
# Team benchmark: sync of 100 000 events laptop → PostgreSQL → laptop against a plain COPY of the
# same rows into the same server (goal ≤ 3×), and the round trips of an incremental sync of 10
# events (goal ≤ 3). A real PostgreSQL started by the harness; optimised build.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -p leasehold-core --bench team_sync --quiet

#!/usr/bin/env bash
# Billing benchmark: the cost report over 100 000 ledger events (goal ≤ 50 ms), with a naive-sum
# baseline measured in the same run. Optimised build (cargo's bench profile).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -p leasehold-core --bench cost_report --quiet

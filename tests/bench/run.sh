#!/usr/bin/env bash
# `make bench`: runs every benchmark script in this folder (one per area); each prints its own
# table with ratios against a baseline it runs itself. Benchmarks assert nothing.
set -euo pipefail
cd "$(dirname "$0")"
status=0
for script in ./*.sh; do
  [ "$(basename "$script")" = run.sh ] && continue
  echo "=== $(basename "$script" .sh) ==="
  bash "$script" || { echo "benchmark $script failed"; status=1; }
done
exit "$status"

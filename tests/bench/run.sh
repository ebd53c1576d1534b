#!/usr/bin/env bash
# `make bench`: every tests/bench/<area>.sh, each printing its figures and ratios to a baseline
# it measures itself. Fails when any area fails (e.g. misses its goal).
set -uo pipefail
cd "$(dirname "$0")"
status=0
for script in ./*.sh; do
  [ "$(basename "$script")" = run.sh ] && continue
  echo "== $(basename "$script" .sh)"
  bash "$script" || status=1
done
exit $status

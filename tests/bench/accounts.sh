#!/usr/bin/env bash
# Provider sync benchmark: an account with 200 instances, 20 of them changed since the last sync,
# against the Vast.ai stand-in (pages of 25, as the real API). Baseline in the same run: the same
# pages fetched with curl, i.e. the stand-in's own answer time. Prints the sync's local work
# (sync − baseline, goal ≤ 1 s), the ratio, and the requests it made (goal: the pages only).
set -euo pipefail
cd "$(dirname "$0")/../.."
# BENCH_PROFILE=debug reuses the test build (no optimised build of every dependency).
profile=${BENCH_PROFILE:-release}
if [ "$profile" = release ]; then cargo build --release --workspace --bin leasehold --quiet; else cargo build --workspace --bin leasehold --quiet; fi
CLI=target/$profile/leasehold
now() { python3 -c 'import time; print(time.monotonic())'; }
calc() { python3 -c "print($1)"; }
work=$(mktemp -d)
trap 'kill $standin 2>/dev/null || true; rm -rf "$work"' EXIT
python3 tests/provider-standin/standin.py vast bench-key > "$work/port" &
standin=$!
until [ -s "$work/port" ]; do sleep 0.1; done
base="http://127.0.0.1:$(head -1 "$work/port")"
control() { curl -s -X "$1" "$base/_standin/$2" -H 'Content-Type: application/json' ${3:+-d "$3"} > /dev/null; }
instances=$(python3 -c 'import json; print(json.dumps([{"id": 5000+n, "name": f"node {n}", "state": "running", "price": "0.5"} for n in range(200)]))')
control POST instances "$instances"
export LEASEHOLD_VAST_API_URL="$base" BENCH_KEY=bench-key
db="$work/ledger.sqlite3"
"$CLI" account add vast --api-key-env BENCH_KEY --db "$db" > /dev/null
"$CLI" account sync --db "$db" > /dev/null    # the first sync imports all 200
for n in $(seq 0 19); do control PATCH "instances/$((5000 + n * 10))" '{"state": "stopped"}'; done
requests_before=$(curl -s "$base/_standin/requests" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
start=$(now)
"$CLI" account sync --db "$db" --json > "$work/sync.json"
sync=$(calc "$(now) - $start")
requests=$(( $(curl -s "$base/_standin/requests" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') - requests_before ))
# The baseline: the same pages fetched one after another by one process (no process start per
# page, which would flatter the sync), timed inside it.
baseline=$(python3 - "$base" <<'PY'
import json, sys, time, urllib.request
base, token, start = sys.argv[1], "", time.monotonic()
while True:
    url = f"{base}/api/v1/instances/?limit=25" + (f"&after_token={token}" if token else "")
    request = urllib.request.Request(url, headers={"Authorization": "Bearer bench-key"})
    token = json.load(urllib.request.urlopen(request)).get("next_token") or ""
    if not token:
        break
print(time.monotonic() - start)
PY
)
events=$(python3 -c 'import json; print(len(json.load(open("'"$work/sync.json"'"))["accounts"][0]["events"]))')
printf 'sync of 200 instances, %s changes recorded: %.3f s; the pages alone (one client): %.3f s\n' "$events" "$sync" "$baseline"
printf 'local work %.3f s (goal ≤ 1 s), ratio sync/pages %.2f, requests %s (8 pages)\n' \
  "$(calc "$sync - $baseline")" "$(calc "$sync / $baseline")" "$requests"

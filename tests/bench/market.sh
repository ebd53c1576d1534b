#!/usr/bin/env bash
# Market benchmark (issue 38). 1) Ranking 20 000 offers for a task against one plain sort of the
# same offers by price (crates/core/benches/market_rank.rs). 2) `leasehold market refresh` of
# RunPod, Vast.ai and Lambda against their stand-ins, each serving a catalog of 2 000 rows;
# baseline in the same run: the same three answers fetched one after another by one plain HTTP
# client (Python's urllib in one process). Prints both times and the ratio.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -p leasehold-core --bench market_rank --quiet

profile=${BENCH_PROFILE:-release}
if [ "$profile" = release ]; then cargo build --release --workspace --bin leasehold --quiet; else cargo build --workspace --bin leasehold --quiet; fi
CLI=target/$profile/leasehold
now() { python3 -c 'import time; print(time.monotonic())'; }
calc() { python3 -c "print($1)"; }
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
start_standin() { # provider key → base URL in $work/<provider>.base
  python3 tests/provider-standin/standin.py "$1" "$2" > "$work/$1.port" &
  pids+=($!)
  until [ -s "$work/$1.port" ]; do sleep 0.1; done
  echo "http://127.0.0.1:$(head -1 "$work/$1.port")" > "$work/$1.base"
}
start_standin runpod rp-bench
start_standin vast vast-bench
start_standin lambda lambda-bench
for provider in runpod vast lambda; do
  curl -s -X POST "$(cat "$work/$provider.base")/_standin/offers" -H 'Content-Type: application/json' \
    -d '{"offers": [], "many": 2000}' > /dev/null
done
export LEASEHOLD_RUNPOD_API_URL=$(cat "$work/runpod.base") LEASEHOLD_VAST_API_URL=$(cat "$work/vast.base") \
  LEASEHOLD_LAMBDA_API_URL=$(cat "$work/lambda.base") LEASEHOLD_AUTODL_API_URL=http://127.0.0.1:9 \
  RP_KEY=rp-bench LAMBDA_KEY=lambda-bench
db="$work/ledger.sqlite3"
"$CLI" account add runpod --api-key-env RP_KEY --db "$db" > /dev/null
"$CLI" account add lambda --api-key-env LAMBDA_KEY --db "$db" > /dev/null
start=$(now)
"$CLI" market refresh --json --db "$db" > "$work/refresh.json"
refresh=$(calc "$(now) - $start")
offers=$(python3 -c 'import json; print(sum(p["offers"] for p in json.load(open("'"$work/refresh.json"'"))["providers"]))')
baseline=$(python3 - "$LEASEHOLD_RUNPOD_API_URL" "$LEASEHOLD_VAST_API_URL" "$LEASEHOLD_LAMBDA_API_URL" <<'PY'
import json, sys, time, urllib.request
runpod, vast, lam = sys.argv[1:4]
start = time.monotonic()
def get(url, key, body=None):
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
    return json.load(urllib.request.urlopen(request))
get(f"{runpod}/v2/catalog/gpus?include=AVAILABILITY&product=POD", "rp-bench")
get(f"{vast}/api/v0/bundles/", "vast-bench", {"rentable": {"eq": True}, "rented": {"eq": False},
    "verified": {"eq": True}, "num_gpus": {"gte": 1}, "type": "on-demand",
    "order": [["dph_total", "asc"]], "limit": 1000})
get(f"{lam}/api/v1/instance-types", "lambda-bench")
print(time.monotonic() - start)
PY
)
printf 'market refresh of 3 providers (%s offers kept, CLI start included): %.3f s; the three answers with one plain client: %.3f s; ratio %.2f\n' \
  "$offers" "$refresh" "$baseline" "$(calc "$refresh / $baseline")"

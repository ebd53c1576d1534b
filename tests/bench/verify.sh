#!/usr/bin/env bash
# Verify battery benchmark: the full probe battery against the fake GPU host on sshd in a network
# namespace at 50 ms RTT (handshake, total, slowest probe), next to the same battery on this
# computer. Needs root; prints why otherwise. Extra arguments go to the binary, e.g. `--repeat 5`.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --quiet --release -p leasehold-core --example verify_bench
target_dir="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
exec "$target_dir/release/examples/verify_bench" "$@"

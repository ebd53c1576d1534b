#!/usr/bin/env bash
# Install benchmark: following a remote job's log through the app's follow code against OpenSSH
# (`ssh host 'generator | cat'`) at 10 MB/s, and re-attach after a cut link against a handshake
# plus two round trips, over the userspace delay link at 50 ms RTT with sshd inside a network
# namespace. Needs root; prints why otherwise. Extra arguments go to the binary: --one-way-ms N
# (25), --seconds N (8), --mbps N (10), --cut-seconds N (8).
set -euo pipefail
cd "$(dirname "$0")/../.."
# Release build: the follow loop and the SSH engine's copy loops are what is measured.
cargo build --quiet --release -p leasehold-core --example install_bench
target_dir="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
exec "$target_dir/release/examples/install_bench" "$@"

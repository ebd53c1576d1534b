#!/usr/bin/env bash
# SSH engine benchmark: Leasehold against OpenSSH (sequential ssh, ControlMaster, sftp) over the
# userspace delay link at 50 ms RTT, sshd inside a network namespace. Needs root; prints why
# otherwise. Extra arguments go to the binary: --one-way-ms N (25), --repeat N (3; 0 skips the battery), --sftp-mb N (200).
set -euo pipefail
cd "$(dirname "$0")/../.."
# Release build: the engine's crypto and copy loops are what is measured.
cargo build --quiet --release -p leasehold-core --example ssh_bench
target_dir="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
exec "$target_dir/release/examples/ssh_bench" "$@"

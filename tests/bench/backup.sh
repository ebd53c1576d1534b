#!/usr/bin/env bash
# Backup benchmark: the at-risk scan (50 repositories, 100 000 files) against the same script on
# the host plus one handshake, and a backup of 20 000 small files (200 MB) against OpenSSH
# `sftp -r` and `ssh host tar c | tar x`, over the userspace delay link at 50 ms RTT with sshd in
# a network namespace. Needs root; prints why otherwise. Extra arguments go to the binary:
# --one-way-ms N (25), --repos N (50), --files N (100000), --small N (20000), --small-kb N (10).
set -euo pipefail
cd "$(dirname "$0")/../.."
# Release build: hashing and unpacking speed are part of what is measured.
cargo build --quiet --release -p leasehold-core --example backup_bench
target_dir="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
exec "$target_dir/release/examples/backup_bench" "$@"

#!/usr/bin/env bash
# make fuzz: run every cargo-fuzz target under fuzz/ for a bounded time (FUZZ_SECONDS each,
# default 60). cargo-fuzz needs a nightly toolchain (for the sanitizer); both are installed when
# missing. The corpus is seeded from the nvidia-smi fixtures.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds="${FUZZ_SECONDS:-60}"
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

corpus_root=fuzz/corpus
mkdir -p "$corpus_root/nvidia_smi" "$corpus_root/probe_outputs"
for f in crates/core/tests/fixtures/nvidia-smi/*; do
  case "$f" in *.md) continue ;; esac
  cp -n "$f" "$corpus_root/nvidia_smi/" 2>/dev/null || true
done

cd fuzz
for target in $(cargo +nightly fuzz list); do
  echo "== fuzzing $target for ${seconds}s"
  cargo +nightly fuzz run "$target" "corpus/$target" -- -max_total_time="$seconds" -max_len=262144
done
echo "make fuzz: no target crashed"

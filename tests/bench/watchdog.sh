#!/usr/bin/env bash
# Watchdog benchmark: the CPU the generated watchdog script spends per sample (every signal on,
# the fake nvidia-smi, this machine's real /proc and cgroup), projected to the default 60 s
# interval as a share of one core (goal ≤ 0.2 %). Baseline, measured in the same run: calling
# the same nvidia-smi once per sample and nothing else, so the ratio is what the script adds to
# the GPU query it cannot avoid. Uses `leasehold watchdog script` from the debug build.
set -euo pipefail
cd "$(dirname "$0")/../.."
samples=${WATCHDOG_BENCH_SAMPLES:-30}
cargo build -q -p leasehold-cli
work=$(mktemp -d)
trap 'bash "$work/wd.sh" stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$work/profile"
printf 'index, utilization.gpu [%%]\n0, 0 %%\n1, 0 %%\n' > "$work/profile/query-gpu.csv"
export PATH="$PWD/tests/fake-gpu-hosts/bin:$PATH" FAKE_GPU_PROFILE="$work/profile"
target/debug/leasehold watchdog script --interval 1s --idle 1h --grace 0s \
  --power-off "echo off >> $work/calls" --state-dir "$work/state" > "$work/wd.sh"

tck=$(getconf CLK_TCK)
# CPU ticks of a process and its waited-for children (utime stime cutime cstime).
ticks_of() { read -r -a f < "/proc/$1/stat"; echo $(( f[13] + f[14] + f[15] + f[16] )); }

pid=$(bash "$work/wd.sh" start)
until [ "$(grep -c ' busy \| idle ' "$work/state/log" 2>/dev/null)" -ge "$samples" ]; do sleep 0.5; done
watchdog_ticks=$(ticks_of "$pid")
bash "$work/wd.sh" stop

# The baseline in a shell of its own, which reads its CPU (and its waited-for children's) at the end.
base_ticks=$(bash -c 'for _ in $(seq 1 "$1"); do nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits >/dev/null; done
read -r -a f < /proc/$$/stat; echo $(( f[13] + f[14] + f[15] + f[16] ))' _ "$samples")

awk -v w="$watchdog_ticks" -v b="$base_ticks" -v n="$samples" -v h="$tck" 'BEGIN {
  per = w / h / n; per_base = b / h / n
  printf "%-36s %10s %16s\n", "", "CPU s/sample", "% core @ 60 s"
  printf "%-36s %10.4f %15.4f%%\n", "watchdog (all signals)", per, per / 60 * 100
  printf "%-36s %10.4f %15.4f%%\n", "baseline: nvidia-smi alone", per_base, per_base / 60 * 100
  if (per_base > 0) printf "ratio watchdog / baseline: %.2f\n", per / per_base
}'

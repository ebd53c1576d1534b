#!/usr/bin/env bash
# Desktop app benchmark: start-up (launch → window mapped) and idle memory (PSS of the app and its
# WebKit processes) of Leasehold next to a minimal Tauri app built the same way (same tauri, same
# dev profile, frontend embedded, same window size and a title with the same Chinese characters:
# the first CJK glyphs make GTK load a fallback font, ~60 ms before the window maps, a cost of
# the required title rather than of our code: tests/bench/minimal-app).
# Goal: start-up ≤ 1.2, idle memory ≤ 1.1 (issue 36).
# A third app, the floor, is the minimal app with a Svelte page that starts the way ours does
# (svelte-i18n with our English table, one call to Rust: minimal-app/floor): what any Svelte UI
# on Tauri holds before doing anything, so the gap splits into the UI stack's share and ours.
# Runs alternate between the apps so machine load affects all alike; medians are compared.
# After the ratios it lists the mappings where Leasehold holds the most above the floor (which
# library's code, the app binary's, the heap, a font); tests/bench/app_code_by_crate.py then
# splits the app binary's resident code by crate.
# BENCH_APP_PROFILE=release compares release builds instead (what users install; a release build
# of Leasehold takes ~20 min on two cores, so the debug builds `make test` already made are the
# default).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
target=${CARGO_TARGET_DIR:-$repo/target}
runs=${BENCH_APP_RUNS:-5}
settle=${BENCH_APP_SETTLE_S:-5}

profile=${BENCH_APP_PROFILE:-dev}
case $profile in
  dev) out=debug build_hint="make build" ;;
  release) out=release build_hint="cargo build --release -p leasehold-app" ;;
  *) echo "app.sh: BENCH_APP_PROFILE is dev or release, not '$profile'" >&2; exit 2 ;;
esac
app=${LEASEHOLD_APP_BIN:-$target/$out/leasehold-app}
[ -x "$app" ] || { echo "app.sh: no app binary at $app (run '$build_hint')" >&2; exit 1; }
# The floor page is built with the UI's own Vite and Svelte, linked in rather than installed twice.
[ -d ui/node_modules ] || { echo "app.sh: no ui/node_modules (run 'make build')" >&2; exit 1; }
floor_page=tests/bench/minimal-app/floor
ln -sfn ../../../../ui/node_modules "$floor_page/node_modules"
(cd "$floor_page" && ./node_modules/.bin/vite build)
CARGO_TARGET_DIR=$target cargo build --quiet --profile "$profile" --manifest-path tests/bench/minimal-app/Cargo.toml
minimal=$target/$out/leasehold-minimal-app
floor=$target/$out/leasehold-floor-app

results=$(mktemp)
trap 'rm -f "$results"' EXIT
measure() {
  xvfb-run -a -s "-screen 0 1280x860x24 -nolisten tcp" \
    python3 tests/bench/app_probe.py "$1" "$2" "$settle"
}
for _ in $(seq "$runs"); do
  measure "$app" 'Leasehold · 算力租用管家' | sed 's/^/leasehold /' >>"$results"
  measure "$minimal" 'Minimal · 算力租用管家' | sed 's/^/minimal /' >>"$results"
  measure "$floor" 'Floor · 算力租用管家' | sed 's/^/floor /' >>"$results"
done

python3 - "$results" "$runs" "$out" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, data = line.split(" ", 1)
    rows.setdefault(label, []).append(json.loads(data))
def median(label, key):
    return statistics.median(r[key] for r in rows[label])
print(f"app start-up and idle memory, median of {sys.argv[2]} runs each ({sys.argv[3]} builds, Xvfb)")
print(f"{'metric':<32}{'leasehold':>12}{'minimal':>12}{'ratio':>8}   goal       {'floor':>8}{'ratio':>7}")
for key, name, scale, unit in [
    ("startup_ms", "launch → window mapped", 1, "ms"),
    ("pss_kb", "idle memory, PSS summed", 1024, "MiB"),
    ("rss_kb", "idle memory, RSS summed", 1024, "MiB"),
    ("pss_app_kb", "  PSS: the app process", 1024, "MiB"),
    ("pss_web_kb", "  PSS: WebKit web process", 1024, "MiB"),
    ("pss_network_kb", "  PSS: WebKit network process", 1024, "MiB"),
]:
    ours, base, floor = median("leasehold", key), median("minimal", key), median("floor", key)
    goal = {"startup_ms": "≤ 1.2", "pss_kb": "≤ 1.1"}.get(key, "(info)")
    print(
        f"{name + ' (' + unit + ')':<32}{ours / scale:>12.1f}{base / scale:>12.1f}{ours / base:>8.2f}   {goal:<11}"
        f"{floor / scale:>8.1f}{floor / base:>7.2f}"
    )
print("processes measured: " + ", ".join(f"{label} {rows[label][0]['processes']}" for label in ("leasehold", "minimal", "floor")))

# The goal's room once the UI stack is paid for: what is left for Leasehold's own code and data.
base, floor, ours = (median(label, "pss_kb") / 1024 for label in ("minimal", "floor", "leasehold"))
print(
    f"idle memory above the floor (a Svelte page on Tauri, {floor / base:.2f}× the minimal app): "
    f"Leasehold {ours - floor:.1f} MiB; the 1.1× goal leaves {1.1 * base - floor:.1f} MiB"
)

# Where Leasehold's own memory lies: the mappings whose median PSS differs most from the floor's.
def mapping_median(label, name):
    return statistics.median(r["pss_by_mapping_kb"].get(name, 0) for r in rows[label])
names = {name for label in rows for r in rows[label] for name in r["pss_by_mapping_kb"]}
gaps = sorted(
    ((mapping_median("leasehold", n), mapping_median("floor", n), mapping_median("minimal", n), n) for n in names),
    key=lambda row: abs(row[0] - row[1]),
    reverse=True,
)
print("\nwhere the difference lies (PSS in MiB by process and mapping, medians; the 12 largest gaps to the floor)")
print(f"{'process: mapping':<52}{'leasehold':>10}{'floor':>8}{'minimal':>9}{'more':>8}")
for ours, floor, base, name in gaps[:12]:
    print(f"{name[:51]:<52}{ours / 1024:>10.1f}{floor / 1024:>8.1f}{base / 1024:>9.1f}{(ours - floor) / 1024:>+8.1f}")
PY

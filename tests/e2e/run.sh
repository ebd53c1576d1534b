#!/usr/bin/env bash
# GUI end-to-end tests: the real app binary in a real window under Xvfb, driven over WebDriver
# (tauri-driver → WebKitWebDriver) by node's test runner. Called by `make e2e` after `make build`.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
target=${CARGO_TARGET_DIR:-$repo/target}

export LEASEHOLD_APP_BIN=${LEASEHOLD_APP_BIN:-$target/debug/leasehold-app}
export LEASEHOLD_SCREENSHOT_DIR=${LEASEHOLD_SCREENSHOT_DIR:-$target/screenshots}
export PATH="$repo/.tools/bin:$PATH"

for tool in tauri-driver WebKitWebDriver xvfb-run node localedef import xwininfo; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool is missing (run 'make deps')" >&2; exit 1; }
done
[ -x "$LEASEHOLD_APP_BIN" ] || { echo "e2e: no app binary at $LEASEHOLD_APP_BIN (run 'make build')" >&2; exit 1; }

# The app takes its default language from the system locale. CI machines have only C.UTF-8, so
# compile the two locales the tests launch with into a private folder (no root needed).
export LOCPATH="$target/e2e-locales"
mkdir -p "$LOCPATH"
for locale in zh_CN en_US; do
  [ -d "$LOCPATH/$locale.UTF-8" ] || localedef -i "$locale" -f UTF-8 "$LOCPATH/$locale.UTF-8"
done

rm -rf "$LEASEHOLD_SCREENSHOT_DIR"
mkdir -p "$LEASEHOLD_SCREENSHOT_DIR"
echo "e2e: app $LEASEHOLD_APP_BIN"
echo "e2e: screenshots go to $LEASEHOLD_SCREENSHOT_DIR"

# -a picks a free display; one screen as big as a 1440 × 900 laptop window needs, 24-bit so
# screenshots keep colour (the window itself opens at 1200 × 800).
# Test files run one after another: each launches its own app, and 2-core CI machines are slow.
# Test files given as arguments run alone (handy while working on one screen); default: all.
if [ $# -gt 0 ]; then files=("$@"); else files=(tests/e2e/*.test.mjs); fi
# A hard ceiling so a wedged WebKit process can never hold CI until its own limit.
timeout --kill-after=15 1800 xvfb-run -a -s "-screen 0 1500x960x24 -nolisten tcp" \
  node --test --test-concurrency=1 "${files[@]}"
echo "e2e: screenshots in $LEASEHOLD_SCREENSHOT_DIR"

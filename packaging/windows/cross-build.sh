#!/usr/bin/env bash
# Cross-build leasehold.exe and leasehold-app.exe for x86_64-pc-windows-gnu with Debian's
# MinGW-w64 (`make windows`; `make test` runs it beside the GUI tests). WIN_PROFILE=debug
# (default) or release. Expects `make windows-deps` and the web UI in ui/dist.
set -euo pipefail
cd "$(dirname "$0")/../.."

TARGET=x86_64-pc-windows-gnu
PROFILE=${WIN_PROFILE:-debug}
OUT=target/$TARGET/$PROFILE
release=()
[ "$PROFILE" = release ] && release=(--release)

cargo build --target "$TARGET" -p leasehold-cli -p leasehold-app "${release[@]}"
# The GNU build loads WebView2Loader.dll at run time (MSVC links it statically): it ships beside
# the app, as Tauri's bundler does; webview2-com-sys carries Microsoft's copy.
loader=$(ls -t "$OUT"/build/webview2-com-sys-*/out/x64/WebView2Loader.dll | head -1)
cp "$loader" "$OUT/"
ls -l "$OUT/leasehold.exe" "$OUT/leasehold-app.exe" "$OUT/WebView2Loader.dll"

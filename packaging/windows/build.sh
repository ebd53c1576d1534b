#!/usr/bin/env bash
# make windows-installer: the per-user NSIS installer and a portable .zip from the .exe files
# `make windows` built (PROFILE=debug by default; `make windows-installer WIN_PROFILE=release`
# for a release). Everything used is on this machine: Debian's makensis and zip, the icon in
# icons/, no download.
set -euo pipefail
cd "$(dirname "$0")/../.."

PROFILE=${WIN_PROFILE:-debug}
BIN_DIR=target/x86_64-pc-windows-gnu/$PROFILE
OUT=target/windows-dist
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
for exe in leasehold-app.exe leasehold.exe WebView2Loader.dll; do
  [ -f "$BIN_DIR/$exe" ] || { echo "$BIN_DIR/$exe is missing: run make windows"; exit 1; }
done
mkdir -p "$OUT"

installer="$OUT/Leasehold_${VERSION}_x64-setup.exe"
# WIN_WEBVIEW2_BOOTSTRAPPER_URL: the tests' stand-in for Microsoft's bootstrapper, on loopback.
makensis -V2 -INPUTCHARSET UTF8 ${WIN_INSTALLER_FAST:+-DFAST} \
  ${WIN_WEBVIEW2_BOOTSTRAPPER_URL:+"-DWEBVIEW2_BOOTSTRAPPER_URL=$WIN_WEBVIEW2_BOOTSTRAPPER_URL"} \
  -DVERSION="$VERSION" -DBIN_DIR="$PWD/$BIN_DIR" -DICON="$PWD/icons/icon.ico" \
  -DOUT_FILE="$PWD/$installer" packaging/windows/leasehold.nsi

# Portable: unzip anywhere and run leasehold-app.exe; data still goes to %APPDATA%\Leasehold.
portable="$OUT/Leasehold_${VERSION}_x64-portable.zip"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/Leasehold"
cp "$BIN_DIR/leasehold-app.exe" "$BIN_DIR/leasehold.exe" "$BIN_DIR/WebView2Loader.dll" "$stage/Leasehold/"
cp packaging/windows/PORTABLE.txt "$stage/Leasehold/README.txt"
rm -f "$portable"
(cd "$stage" && zip -q -r -X "$OLDPWD/$portable" Leasehold)
ls -l "$installer" "$portable"

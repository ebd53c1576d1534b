#!/usr/bin/env bash
# make release-artifacts: the signed .deb and Windows installer the self-update installs, and
# latest.json (version, notes in English and Chinese, pub_date, each platform's url and
# signature) in target/release-artifacts/, ready to upload to the mirror and the release page.
#
# Needs, in the environment:
#   TAURI_SIGNING_PRIVATE_KEY   the signing key's text (`ui/node_modules/.bin/tauri signer generate`)
#   TAURI_SIGNING_PRIVATE_KEY_PASSWORD   its password, if it has one
#   LEASEHOLD_UPDATE_PUBKEY     the matching public key (the .pub file's text), built into the app
# and release notes in packaging/release/notes/VERSION.en.md and VERSION.zh-CN.md.
# RELEASE_BASE_URL (default: the GitHub release of vVERSION) is where the files will be served.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ -z "${TAURI_SIGNING_PRIVATE_KEY:-}" ]; then
  cat >&2 <<'MSG'
make release-artifacts: TAURI_SIGNING_PRIVATE_KEY is not set, so nothing was built.
The self-update installs only what this key signed. Set it (and TAURI_SIGNING_PRIVATE_KEY_PASSWORD
when the key has one) and LEASEHOLD_UPDATE_PUBKEY to the matching public key, then run it again.
A new pair: ui/node_modules/.bin/tauri signer generate -w ~/.leasehold/update.key
MSG
  exit 1
fi
if [ -z "${LEASEHOLD_UPDATE_PUBKEY:-}" ]; then
  echo "make release-artifacts: LEASEHOLD_UPDATE_PUBKEY is not set: the app would have no key to check updates with" >&2
  exit 1
fi

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
notes_en=packaging/release/notes/$version.en.md
notes_zh=packaging/release/notes/$version.zh-CN.md
for notes in "$notes_en" "$notes_zh"; do
  [ -s "$notes" ] || { echo "make release-artifacts: write the release notes in $notes first" >&2; exit 1; }
done
# --check: only what is needed before anything is installed or built.
[ "${1:-}" = --check ] && exit 0
base_url=${RELEASE_BASE_URL:-https://github.com/leasehold/leasehold/releases/download/v$version}

# What the app is built with: its build date (reproducible: the commit's), its channel and the
# update key (core reads all three at compile time).
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export LEASEHOLD_CHANNEL=${LEASEHOLD_CHANNEL:-stable}
export LEASEHOLD_UPDATE_PUBKEY

./ui/node_modules/.bin/tauri build --bundles deb
deb=$(ls -t target/release/bundle/deb/*_"$version"_*.deb | head -1)
WIN_PROFILE=release bash packaging/windows/cross-build.sh
WIN_PROFILE=release bash packaging/windows/build.sh
setup=target/windows-dist/Leasehold_${version}_x64-setup.exe

bash packaging/release/manifest.sh target/release-artifacts "$version" "$base_url" \
  "$deb" "$setup" "$notes_en" "$notes_zh"
ls -l target/release-artifacts

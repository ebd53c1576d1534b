#!/usr/bin/env bash
# Signs the updater's installers and writes latest.json beside them (called by artifacts.sh;
# crates/cli/tests/release_artifacts.rs runs it on stand-in files with a throwaway key).
#
#   manifest.sh OUT_DIR VERSION BASE_URL LINUX_DEB WINDOWS_SETUP NOTES_EN NOTES_ZH
#
# Needs TAURI_SIGNING_PRIVATE_KEY (the key's text, from `tauri signer generate`) and, when the
# key has one, TAURI_SIGNING_PRIVATE_KEY_PASSWORD. Each installer gets a .sig bound to VERSION
# (`tauri signer sign --app-version`), which the app checks before installing.
set -euo pipefail
cd "$(dirname "$0")/../.."

[ $# -eq 7 ] || { echo "usage: $0 OUT_DIR VERSION BASE_URL LINUX_DEB WINDOWS_SETUP NOTES_EN NOTES_ZH" >&2; exit 2; }
out=$1 version=$2 base_url=${3%/} deb=$4 setup=$5 notes_en=$6 notes_zh=$7
if [ -z "${TAURI_SIGNING_PRIVATE_KEY:-}" ]; then
  echo "release: TAURI_SIGNING_PRIVATE_KEY is not set; without the signing key no update can be published" >&2
  exit 1
fi
for file in "$deb" "$setup" "$notes_en" "$notes_zh"; do
  [ -s "$file" ] || { echo "release: $file is missing or empty" >&2; exit 1; }
done
tauri=ui/node_modules/.bin/tauri
[ -x "$tauri" ] || { echo "release: $tauri is missing: run make ui-deps" >&2; exit 1; }
export TAURI_SIGNING_PRIVATE_KEY_PASSWORD=${TAURI_SIGNING_PRIVATE_KEY_PASSWORD:-}

mkdir -p "$out"
for file in "$deb" "$setup"; do
  name=$(basename "$file")
  [ "$(realpath "$file")" = "$(realpath -m "$out/$name")" ] || cp "$file" "$out/$name"
  rm -f "$out/$name.sig"
  "$tauri" signer sign --app-version "$version" "$out/$name" >/dev/null
  [ -s "$out/$name.sig" ] || { echo "release: signing $name wrote no signature" >&2; exit 1; }
done

python3 - "$out" "$version" "$base_url" "$(basename "$deb")" "$(basename "$setup")" "$notes_en" "$notes_zh" <<'PY'
import datetime, json, os, sys
out, version, base, deb, setup, notes_en, notes_zh = sys.argv[1:]
def entry(name):
    signature = open(os.path.join(out, name + ".sig")).read().strip()
    return {"url": f"{base}/{name}", "signature": signature}
en = open(notes_en, encoding="utf-8").read().strip()
zh = open(notes_zh, encoding="utf-8").read().strip()
epoch = os.environ.get("SOURCE_DATE_EPOCH")
when = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else datetime.datetime.now(datetime.timezone.utc)
manifest = {
    "version": version,
    "pub_date": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
    # `notes` is what tauri-plugin-updater reads; Leasehold shows `notes_by_language`.
    "notes": en,
    "notes_by_language": {"en": en, "zh-CN": zh},
    "platforms": {
        "linux-x86_64": entry(deb),
        "linux-x86_64-deb": entry(deb),
        "windows-x86_64": entry(setup),
        "windows-x86_64-nsis": entry(setup),
    },
}
with open(os.path.join(out, "latest.json"), "w", encoding="utf-8") as f:
    json.dump(manifest, f, ensure_ascii=False, indent=2)
    f.write("\n")
PY
echo "release: $out/latest.json for $version"

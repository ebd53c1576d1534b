#!/usr/bin/env bash
# The Windows build under Wine (make windows-test, part of make test): checks what the two .exe
# files link against, then runs crates/cli/tests/windows_wine.rs, which compares leasehold.exe
# with the Linux build on the same inputs and drives it against a real sshd on loopback.
# Expects `make windows` and `make build` to have run (the Makefile target sees to it).
set -euo pipefail
cd "$(dirname "$0")/../.."

WIN_OUT=target/x86_64-pc-windows-gnu/debug
WINE=${LEASEHOLD_WINE:-/usr/lib/wine/wine64}
export WINEPREFIX=${WINEPREFIX:-$PWD/target/wine-prefix}
export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="

for exe in leasehold.exe leasehold-app.exe; do
  [ -f "$WIN_OUT/$exe" ] || { echo "$WIN_OUT/$exe is missing: run make windows"; exit 1; }
done

# A Windows laptop has only the system's DLLs: any MinGW runtime DLL (libgcc_s, libwinpthread,
# libstdc++) the linker left dynamic would make the .exe fail to start there.
for exe in leasehold.exe leasehold-app.exe; do
  dlls=$(x86_64-w64-mingw32-objdump -p "$WIN_OUT/$exe" | awk '/DLL Name:/ { print $3 }' | sort -u)
  foreign=$(grep -viE '^(api-ms-win-.*|kernel32|kernelbase|ntdll|combase|ktmw32|user32|gdi32|advapi32|shell32|ole32|oleaut32|comctl32|comdlg32|uxtheme|dwmapi|shlwapi|ws2_32|bcrypt|bcryptprimitives|crypt32|secur32|ncrypt|userenv|msvcrt|ucrtbase|vcruntime140|rpcrt4|iphlpapi|dbghelp|propsys|version|winmm|imm32|setupapi|cfgmgr32|powrprof|d2d1|d3d11|dxgi|dwrite|windowscodecs|msimg32|winspool|mpr|netapi32|psapi|credui|wtsapi32|synchronization|shcore|gdiplus|opengl32|winhttp|wininet|urlmon|dcomp|oleacc|uiautomationcore|msi|comsupp)\.dll$' <<<"$dlls" || true)
  for dll in $foreign; do
    # Only what ships beside it (WebView2Loader.dll for the app) may come from elsewhere.
    [ -f "$WIN_OUT/$dll" ] || { echo "$exe needs $dll, which Windows does not ship"; exit 1; }
  done
done
# The app is a windowed program (no console window behind it); the CLI a console one.
# (Read whole first: `grep -q` stops reading early, and under pipefail objdump's broken pipe
# would fail the check.)
subsystem() { x86_64-w64-mingw32-objdump -p "$WIN_OUT/$1" | grep '^Subsystem'; }
[[ $(subsystem leasehold-app.exe) == *"(Windows GUI)"* ]] \
  || { echo "leasehold-app.exe is not a GUI-subsystem program"; exit 1; }
[[ $(subsystem leasehold.exe) == *"(Windows CUI)"* ]] \
  || { echo "leasehold.exe is not a console program"; exit 1; }

# Wait for Wine's processes to end; a leftover one must not hold the run until CI's limit.
settle() {
  timeout 120 "${WINE%/*}/wineserver" -w || echo "wine: processes still running after 2 minutes; going on"
}

# A free X display number for a private Xvfb.
desktop_display() {
  local n=140
  while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
  echo "$n"
}

# One prefix, made once and kept in target/ (wineboot takes a while the first time).
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "creating the Wine prefix in $WINEPREFIX"
  env -u DISPLAY "$WINE" wineboot -i >/dev/null 2>&1 || true
  settle
fi

# Debian 12's Wine 8.0 lacks bcryptprimitives.dll (Windows 10/11 ship it; Rust's std needs its
# ProcessPrng): a test-only stand-in, see bcryptprimitives.c. A newer Wine brings its own.
system32=$WINEPREFIX/drive_c/windows/system32
if [ ! -f "$system32/bcryptprimitives.dll" ]; then
  x86_64-w64-mingw32-gcc -O2 -shared -Wl,--kill-at -o "$system32/bcryptprimitives.dll" \
    tests/windows/bcryptprimitives.c -ladvapi32
fi

# The installer, silently (/S) as a user would with a double-click: files, Start-menu entry and
# uninstall entry there; the installed CLI runs; the uninstaller removes all three again.
# WebView2: the test installer downloads a stand-in bootstrapper from loopback (built into it
# with WIN_WEBVIEW2_BOOTSTRAPPER_URL) and must run it with /silent /install when the runtime is
# missing, and not when it is there.
standin_dir=$(mktemp -d)
x86_64-w64-mingw32-gcc -O2 -o "$standin_dir/MicrosoftEdgeWebview2Setup.exe" \
  tests/windows/webview2-standin.c -ladvapi32
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$standin_dir" >/dev/null 2>&1 &
standin_server=$!
WIN_INSTALLER_FAST=1 WIN_WEBVIEW2_BOOTSTRAPPER_URL="http://127.0.0.1:$port/MicrosoftEdgeWebview2Setup.exe" \
  bash packaging/windows/build.sh >/dev/null
setup=$(ls target/windows-dist/Leasehold_*_x64-setup.exe)
unix_of() { "$WINE" winepath -u "$1" 2>/dev/null | tr -d '\r'; }
webview2_key='HKCU\Software\Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}'
"$WINE" reg delete "$webview2_key" /f >/dev/null 2>&1 || true
standin_ran="$(unix_of "$("$WINE" cmd /c echo %TEMP% | tr -d '\r')")/webview2-standin.txt"
rm -f "$standin_ran"
localappdata=$("$WINE" cmd /c echo %LOCALAPPDATA% | tr -d '\r')
appdata=$("$WINE" cmd /c echo %APPDATA% | tr -d '\r')
instdir="$localappdata\\Programs\\Leasehold"
shortcut="$(unix_of "$appdata")/Microsoft/Windows/Start Menu/Programs/Leasehold.lnk"
uninstall_key='HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\Leasehold'
"$WINE" "$setup" /S
settle
for file in leasehold-app.exe leasehold.exe WebView2Loader.dll uninstall.exe; do
  [ -f "$(unix_of "$instdir")/$file" ] || { echo "installer: $instdir\\$file is missing"; exit 1; }
done
[ -f "$shortcut" ] || { echo "installer: no Start-menu entry at $shortcut"; exit 1; }
[[ $("$WINE" reg query "$uninstall_key" /v UninstallString) == *uninstall.exe* ]] \
  || { echo "installer: no uninstall entry under $uninstall_key"; exit 1; }
[[ $("$WINE" "$instdir\\leasehold.exe" paths --json) == *'"data"'* ]] \
  || { echo "installer: the installed leasehold.exe does not run"; exit 1; }
[[ -f "$standin_ran" && $(cat "$standin_ran") == *"/silent /install"* ]] \
  || { echo "installer: WebView2 missing, but its bootstrapper was not run with /silent /install"; exit 1; }
# The runtime is there now (the stand-in registered it): a second install leaves it alone.
rm -f "$standin_ran"
"$WINE" "$setup" /S
settle
[ ! -e "$standin_ran" ] || { echo "installer: ran the WebView2 bootstrapper with the runtime present"; exit 1; }
# Update mode, silently first (/S /UPDATE, as a script would run it): the shortcut
# the user removed stays removed, no WebView2 step even with the runtime "missing", data kept.
"$WINE" reg delete "$webview2_key" /f >/dev/null 2>&1 || true
rm -f "$shortcut"
data="$(unix_of "$appdata")/Leasehold"
mkdir -p "$data" && echo kept >"$data/update-marker"
"$WINE" "$setup" /S /UPDATE
settle
[ -f "$(unix_of "$instdir")/leasehold-app.exe" ] || { echo "update: the app is missing"; exit 1; }
[ ! -e "$shortcut" ] || { echo "update: recreated the Start-menu entry"; exit 1; }
[ ! -e "$standin_ran" ] || { echo "update: ran the WebView2 bootstrapper"; exit 1; }
[ "$(cat "$data/update-marker")" = kept ] || { echo "update: the data folder was not kept"; exit 1; }
# The self-update's own call (tauri-plugin-updater, passive mode): /P shows only the progress
# window, so it needs a desktop (a private Xvfb); /R starts the app again afterwards. The app
# logs its start before it looks for WebView2 (Wine has none, so it stops there): one more
# "starting" line in its log is the relaunch.
rm -f "$shortcut"
starts() { cat "$data"/logs/*.log 2>/dev/null | grep -c ' starting' || true; }
starts_before=$(starts)
display=$(desktop_display)
Xvfb ":$display" -nolisten tcp >/dev/null 2>&1 &
desktop=$!
waited=0
until [ -S "/tmp/.X11-unix/X$display" ]; do
  sleep 0.2; waited=$((waited + 1))
  [ $waited -lt 100 ] || { echo "update: Xvfb did not start"; exit 1; }
done
# Wine's desktop process started without a display for the silent runs; a fresh wineserver
# starts it again on this one.
"${WINE%/*}/wineserver" -k 2>/dev/null || true
passive=0
DISPLAY=":$display" "$WINE" "$setup" /P /R /UPDATE /R /ARGS >/dev/null 2>&1 || passive=$?
settle
kill "$desktop" 2>/dev/null || true
[ $passive -eq 0 ] || { echo "update /P /R: the installer exited with $passive"; exit 1; }
[ -f "$(unix_of "$instdir")/leasehold-app.exe" ] || { echo "update /P /R: the app is missing"; exit 1; }
[ ! -e "$shortcut" ] || { echo "update /P /R: recreated the Start-menu entry"; exit 1; }
[ ! -e "$standin_ran" ] || { echo "update /P /R: ran the WebView2 bootstrapper"; exit 1; }
[ "$(cat "$data/update-marker")" = kept ] || { echo "update /P /R: the data folder was not kept"; exit 1; }
[ "$(starts)" -gt "$starts_before" ] || { echo "update /P /R: the app was not started again"; exit 1; }
rm -f "$data/update-marker"
kill "$standin_server" 2>/dev/null || true
rm -rf "$standin_dir"
"$WINE" "$instdir\\uninstall.exe" /S
settle
sleep 2
[ ! -e "$(unix_of "$instdir")/leasehold-app.exe" ] && [ ! -e "$shortcut" ] \
  || { echo "uninstaller: files or the Start-menu entry are left"; exit 1; }
if "$WINE" reg query "$uninstall_key" >/dev/null 2>&1; then
  echo "uninstaller: the uninstall entry is left"; exit 1
fi
echo "installer: installs per user, Start-menu entry, uninstall entry, WebView2 bootstrapper when missing, update mode (silent, and passive with the relaunch), uninstalls cleanly"

# One wineserver for the whole run: each leasehold.exe would otherwise start its own and Wine's
# services with it, about 3 s each instead of 0.2 s. The services are started here, with
# /dev/null for their output: started by a test's first program, they would keep that program's
# output pipes open as long as the server lives, and the test would wait for them forever.
# The tests take turns (two at once once left one waiting for minutes).
settle
"${WINE%/*}/wineserver" -p
trap '"${WINE%/*}/wineserver" -k 2>/dev/null || true' EXIT
"$WINE" cmd /c exit </dev/null >/dev/null 2>&1

export LEASEHOLD_WINE=$WINE LEASEHOLD_WINDOWS_EXE=$PWD/$WIN_OUT/leasehold.exe
if command -v cargo-nextest >/dev/null; then
  # --workspace, like rust-test: the same feature set, so nothing is compiled a second time.
  cargo nextest run --workspace --test windows_wine --run-ignored ignored-only --no-fail-fast \
    --test-threads 1
else
  cargo test --workspace --test windows_wine -- --ignored --test-threads 1
fi

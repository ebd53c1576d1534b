#!/bin/sh
# Stand-in for https://ollama.com/install.sh, served by the GUI test's HTTP server (which puts its
# own address in place of @BASE@). Like the real one it puts an `ollama` command on PATH: here the
# first folder on PATH this user may write to, as root may write to /usr/local/bin.
set -e
for dir in $(printf '%s' "$PATH" | tr ':' ' '); do
  if [ -d "$dir" ] && [ -w "$dir" ]; then target=$dir; break; fi
done
[ -n "$target" ] || { echo "no writable folder on PATH" >&2; exit 1; }
echo ">>> Downloading ollama..."
curl -fsS "@BASE@/ollama" -o "$target/ollama"
curl -fsS "@BASE@/server.py" -o "$target/ollama-standin-server.py"
chmod +x "$target/ollama"
echo ">>> Install complete. Run \"ollama\" from the command line."

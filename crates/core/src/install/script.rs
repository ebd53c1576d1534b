//! Putting a recipe's script together: a header that says what it is, the shared helper
//! functions, every option assigned once through `shell::quote`, then numbered steps.

use crate::shell::quote;

/// The helpers every recipe script starts with. Markers go to stdout, one per line, so the
/// progress parser finds them in the job log.
pub(crate) const PRELUDE: &str = r#"set -uo pipefail
lh_step() { echo "::leasehold::step $1/$LH_TOTAL $2"; }
lh_skip() { echo "::leasehold::skip $*"; }
lh_ok() { echo "::leasehold::ok $*"; }
lh_result() { echo "::leasehold::result $1=$2"; }
lh_finding() { echo "::leasehold::finding $1"; }
lh_fail() { local code=$1; shift; echo "::leasehold::fail $code $*"; exit 1; }
lh_have() { command -v "$1" >/dev/null 2>&1; }
lh_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif lh_have sudo; then sudo -n "$@"
  else lh_fail install.needs_root "this step needs root (or passwordless sudo): $*"; fi
}
# AutoDL's academic accelerator, only around GitHub / Hugging Face downloads (it slows others).
lh_turbo() {
  if [ "${LH_TURBO:-auto}" != off ] && [ -f /etc/network_turbo ]; then
    ( . /etc/network_turbo >/dev/null 2>&1; "$@" )
  else "$@"; fi
}
# Resumable download of $1 to $2: a partial file of the same URL is continued, a finished one
# of the same URL is kept; another URL's file (a changed mirror or installer option) is fetched
# anew, never reused or resumed into. $2.url / $2.part.url say which URL each came from.
lh_download() {
  local url=$1 dest=$2
  if [ -s "$dest" ] && [ "$(cat "$dest.url" 2>/dev/null)" = "$url" ]; then lh_skip "already downloaded: $dest"; return 0; fi
  mkdir -p "$(dirname "$dest")" || return 1
  [ "$(cat "$dest.part.url" 2>/dev/null)" = "$url" ] || rm -f "$dest.part"
  printf '%s\n' "$url" > "$dest.part.url" || return 1
  if lh_have curl; then
    curl -fL --retry 5 --retry-delay 2 -C - -o "$dest.part" "$url" || return 1
  elif lh_have wget; then
    wget -c --progress=dot:mega -O "$dest.part" "$url" || return 1
  else
    lh_fail install.no_downloader "neither curl nor wget is installed"
  fi
  mv -f "$dest.part" "$dest" && mv -f "$dest.part.url" "$dest.url"
}
lh_in_container() {
  [ -f /.dockerenv ] || [ -f /run/.containerenv ] || [ -n "${container:-}" ] && return 0
  grep -qaE '(docker|containerd|kubepods|lxc|podman)' /proc/1/cgroup 2>/dev/null && return 0
  lh_have systemd-detect-virt && systemd-detect-virt -cq 2>/dev/null && return 0
  return 1
}
lh_find_conda() {
  local c
  for c in "${LH_CONDA_PREFIX:-}" "$HOME/miniconda3" "$HOME/anaconda3" /root/miniconda3 /opt/conda /opt/miniconda3; do
    [ -n "$c" ] && [ -x "$c/bin/conda" ] && { echo "$c"; return 0; }
  done
  c=$(command -v conda 2>/dev/null) && [ -n "$c" ] && { dirname "$(dirname "$c")"; return 0; }
  return 1
}
# Sets LH_PY to the python of environment $1 (conda when present, else a venv in ~/.venvs),
# creating it with Python $2 when missing.
lh_python_env() {
  local name=$1 version=$2 base
  if base=$(lh_find_conda); then
    if [ "$name" = base ]; then LH_PY="$base/bin/python"; return 0; fi
    if [ -x "$base/envs/$name/bin/python" ]; then
      lh_skip "conda environment $name exists"
    else
      CONDA_PLUGINS_AUTO_ACCEPT_TOS=yes "$base/bin/conda" create -y -n "$name" "python=$version" \
        || lh_fail install.env_create "could not create the conda environment $name"
    fi
    LH_PY="$base/envs/$name/bin/python"
  else
    if [ -x "$HOME/.venvs/$name/bin/python" ]; then
      lh_skip "virtual environment ~/.venvs/$name exists"
    else
      lh_have python3 || lh_fail install.no_python "no conda and no python3 on this machine; install the miniconda recipe first"
      python3 -m venv "$HOME/.venvs/$name" \
        || lh_fail install.env_create "could not create ~/.venvs/$name (Debian/Ubuntu: apt install python3-venv)"
    fi
    LH_PY="$HOME/.venvs/$name/bin/python"
  fi
  lh_result python "$LH_PY"
}
# pip install into LH_PY, with machine-readable progress where pip supports it.
lh_pip() {
  local bar=
  "$LH_PY" -m pip install --help 2>/dev/null | grep -q 'raw' && bar='--progress-bar=raw'
  "$LH_PY" -m pip install $bar "$@"
}
"#;

/// A script under construction.
pub(crate) struct Script {
    recipe: &'static str,
    notes: Vec<String>,
    vars: Vec<(String, String)>,
    steps: Vec<(String, String)>,
}

impl Script {
    pub fn new(recipe: &'static str) -> Self {
        Self {
            recipe,
            notes: Vec::new(),
            vars: Vec::new(),
            steps: Vec::new(),
        }
    }

    /// A comment line in the header (never user input: fixed text only).
    pub fn note(&mut self, text: impl Into<String>) -> &mut Self {
        self.notes.push(text.into());
        self
    }

    /// `NAME='value'`: the only way a value enters the script.
    pub fn var(&mut self, name: &str, value: &str) -> &mut Self {
        debug_assert!(name.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
        self.vars.push((name.to_owned(), value.to_owned()));
        self
    }

    /// One numbered step: `title` is fixed text, `body` is bash using the variables.
    pub fn step(&mut self, title: &str, body: impl Into<String>) -> &mut Self {
        self.steps.push((title.to_owned(), body.into()));
        self
    }

    pub fn render(&self) -> String {
        let mut out = String::from("#!/usr/bin/env bash\n");
        out.push_str(&format!("# Leasehold recipe: {}\n", self.recipe));
        for note in &self.notes {
            out.push_str(&format!("# {note}\n"));
        }
        out.push_str(PRELUDE);
        for (name, value) in &self.vars {
            out.push_str(&format!("{name}={}\n", quote(value)));
        }
        out.push_str(&format!("LH_TOTAL={}\n", self.steps.len()));
        for (n, (title, body)) in self.steps.iter().enumerate() {
            out.push_str(&format!("\n# --- step {}: {title}\n", n + 1));
            out.push_str(&format!("lh_step {} {}\n", n + 1, quote(title)));
            out.push_str(body.trim_end());
            out.push('\n');
        }
        out.push_str(&format!(
            "\nlh_ok {}\n",
            quote(&format!("{} done", self.recipe))
        ));
        out
    }
}

/// One standalone, commented bash script that replays recipe runs in order: each recorded
/// script runs in its own `bash` (so one recipe's `set` and variables never leak into the next)
/// and the whole stops at the first that fails.
pub fn export_setup(
    instance: &str,
    runs: &[(String, chrono::DateTime<chrono::Utc>, String)],
) -> String {
    let mut out = String::from("#!/usr/bin/env bash\n");
    out.push_str(
        "# Setup exported by Leasehold: rebuilds the environment of a rented instance on a\n",
    );
    out.push_str("# fresh one by running the same install scripts, in the order they succeeded.\n");
    out.push_str(&format!(
        "# Source instance: {}\n",
        instance.replace(|c: char| c.is_control(), " ")
    ));
    out.push_str("# Each step skips what is already there, so running this twice is safe.\n");
    out.push_str("set -euo pipefail\n");
    if runs.is_empty() {
        out.push_str("echo 'No recipe has succeeded on this instance yet; nothing to replay.'\n");
    }
    for (n, (recipe, at, script)) in runs.iter().enumerate() {
        out.push_str(&format!(
            "\n# === {}/{}: {} (succeeded {}) ===\n",
            n + 1,
            runs.len(),
            recipe.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', ""),
            at.to_rfc3339()
        ));
        out.push_str(&format!("bash -c {} leasehold-{n}\n", quote(script)));
    }
    out
}

//! The at-risk scan as one bash script: every root is walked once by `find`, each git
//! repository found is asked five questions, and the answers come back as NUL-terminated,
//! tab-separated records (see `parse`). One channel, one round trip, whatever the tree holds.
//!
//! Every value in the script (roots, data disks, the time of the last backup, a PATH prefix)
//! goes through `shell::quote`; the rest is fixed text.

use chrono::{DateTime, Utc};

use crate::shell::quote;

/// Most weight files and repositories reported; the scan says when it left some out.
pub const MAX_WEIGHTS: usize = 5000;
pub const MAX_REPOS: usize = 500;

/// Folders never walked: package caches and environments are rebuilt from the environment
/// export, not saved file by file, and they hold thousands of `.bin`/`.pt` files of their own.
pub const SKIPPED_FOLDERS: &[&str] = &[
    "node_modules",
    "__pycache__",
    "site-packages",
    ".cache",
    "miniconda3",
    "anaconda3",
    ".conda",
    ".leasehold",
    ".Trash",
    ".local",
];

/// The model weight and checkpoint file patterns.
pub const WEIGHT_PATTERNS: &[&str] = &[
    "*.safetensors",
    "*.bin",
    "*.gguf",
    "*.pt",
    "*.pth",
    "*.ckpt",
];

/// What to scan.
#[derive(Debug, Clone, Default)]
pub struct ScanScript {
    /// Roots the user chose; empty means the defaults (home, the data disks that exist, the
    /// working folders of GPU processes).
    pub roots: Vec<String>,
    /// The provider's data disk (and other default places), used only when `roots` is empty.
    pub data_disks: Vec<String>,
    /// Files modified after this count as changed since the last backup.
    pub since: Option<DateTime<Utc>>,
    /// This computer's time as the scan is sent; with it the script moves `since` onto the
    /// instance's clock when the two differ by more than the link's latency could explain.
    pub sent_at: Option<DateTime<Utc>>,
    /// Put first on PATH (tools outside the login PATH; the fake GPU hosts in tests).
    pub path_prefix: Option<String>,
}

fn words(values: &[String]) -> String {
    values
        .iter()
        .map(|v| quote(v).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

impl ScanScript {
    pub fn render(&self) -> String {
        let prefix = self
            .path_prefix
            .as_deref()
            .map(|p| format!("PATH={}:\"$PATH\"; export PATH\n", quote(p)))
            .unwrap_or_default();
        // Whole seconds would count a file written earlier in the backup's own second as
        // changed after it; GNU find takes `@SECONDS.NANOS`.
        let since = self
            .since
            .map(|t| format!("{}.{:09}", t.timestamp(), t.timestamp_subsec_nanos()))
            .unwrap_or_default();
        let sent_at = self
            .sent_at
            .map(|t| format!("{}.{:09}", t.timestamp(), t.timestamp_subsec_nanos()))
            .unwrap_or_default();
        let skipped = SKIPPED_FOLDERS
            .iter()
            .map(|n| format!("-name {}", quote(n)))
            .collect::<Vec<_>>()
            .join(" -o ");
        let weights = WEIGHT_PATTERNS
            .iter()
            .map(|n| format!("-name {}", quote(n)))
            .collect::<Vec<_>>()
            .join(" -o ");
        format!(
            r#"{prefix}export LC_ALL=C
given=({given})
disks=({disks})
since={since}
sent_at={sent_at}
# A skew under two seconds is within what latency explains, so `since` stays exact then.
if [ -n "$since" ] && [ -n "$sent_at" ]; then
  here=$(date +%s.%N 2>/dev/null) || here=
  case "$here" in
    ''|*[!0-9.]*) ;;
    *) since=$(awk -v s="$since" -v a="$sent_at" -v b="$here" 'BEGIN {{ d = b - a; if (d > 2 || d < -2) printf "%.6f", s + d; else printf "%s", s }}') ;;
  esac
fi
max_weights={max_weights}
max_repos={max_repos}
work=$(mktemp -d) || exit 70
trap 'rm -rf "$work"' EXIT
printf 'H\t%s\0' "$HOME"
apps=$(nvidia-smi --query-compute-apps=gpu_uuid,gpu_bus_id,pid,process_name,used_gpu_memory --format=csv 2>/dev/null) && printf 'A\t%s\0' "$apps"
cwds=()
for pid in $(printf '%s\n' "${{apps:-}}" | awk -F', *' 'NR > 1 && $3 ~ /^[0-9]+$/ {{print $3}}'); do
  cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || continue
  printf 'P\t%s\t%s\0' "$pid" "$cwd"
  cwds+=("$cwd")
done
if [ ${{#given[@]}} -eq 0 ]; then
  cand=("$HOME")
  for d in ${{disks[@]+"${{disks[@]}}"}}; do [ -d "$d" ] && cand+=("$d"); done
  cand+=(${{cwds[@]+"${{cwds[@]}}"}})
else
  cand=("${{given[@]}}")
fi
roots=()
while IFS= read -r r; do
  [ -n "$r" ] || continue
  if [ ! -d "$r" ]; then printf 'M\t%s\0' "$r"; continue; fi
  real=$(cd -- "$r" 2>/dev/null && pwd -P) || {{ printf 'M\t%s\0' "$r"; continue; }}
  dev=$(stat -c %d -- "$real")
  inside=0
  for o in ${{roots[@]+"${{roots[@]}}"}}; do
    case "$real/" in "${{o%/}}/"*) [ "$(stat -c %d -- "$o")" = "$dev" ] && inside=1 ;; esac
  done
  [ $inside -eq 1 ] && continue
  roots+=("$real")
  printf 'R\t%s\0' "$real"
done < <(printf '%s\n' "${{cand[@]}}" | awk '{{print length($0) "\t" $0}}' | sort -n -s | cut -f2-)
if [ ${{#roots[@]}} -gt 0 ]; then
  newer=(-false)
  [ -n "$since" ] && newer=(-newermt "@$since" -fprintf "$work/changed" '%s %T@\n' -false)
  find "${{roots[@]}}" -xdev \
    \( -type d -name .git -fprintf "$work/repos" '%h\0' -prune \) -o \
    \( -type d \( {skipped} \) -prune \) -o \
    \( -type d -name 'checkpoint-*' -fprintf "$work/ckpt" '%p\0' -false \) -o \
    \( -type f "${{newer[@]}}" \) -o \
    \( -type f \( {weights} \) -fprintf "$work/weights" 'W\t%s\t%T@\t%p\0' \) 2>/dev/null
  if [ -s "$work/weights" ]; then
    head -z -n "$max_weights" "$work/weights"
    n=$(tr -cd '\0' < "$work/weights" | wc -c)
    [ "$n" -gt "$max_weights" ] && printf 'T\tweights\t%s\0' "$n"
  fi
  if [ -s "$work/ckpt" ]; then
    head -z -n "$max_weights" "$work/ckpt" | while IFS= read -r -d '' c; do
      printf 'C\t%s\t%s\0' "$(du -sb -- "$c" 2>/dev/null | cut -f1)" "$c"
    done
  fi
  if [ -n "$since" ]; then
    {{ awk 'BEGIN {{ n = 0; b = 0; m = 0 }} {{ n++; b += $1; if ($2 > m) m = $2 }} END {{ printf "N\t%d\t%.0f\t%d", n, b, m }}' "$work/changed" 2>/dev/null ||
      printf 'N\t0\t0\t0'; }}
    printf '\0'
  fi
  if [ -s "$work/repos" ] && command -v git >/dev/null 2>&1; then
    n=0
    me=$(id -u)
    # Another user's repository is never entered: its .git/config could name a command
    # (core.fsmonitor, a hook, a pager) that git would run as us, often root. Even in our own
    # repositories nothing configurable runs: no fsmonitor, no hooks, no pager, no signature check.
    g() {{ GIT_OPTIONAL_LOCKS=0 git --no-pager -c core.fsmonitor=false -c core.hooksPath=/dev/null -c core.pager=cat -c log.showSignature=false -C "$r" "$@" 2>/dev/null; }}
    unset GIT_EXTERNAL_DIFF GIT_PAGER GIT_DIR GIT_WORK_TREE
    while IFS= read -r -d '' r; do
      n=$((n + 1))
      [ $n -gt "$max_repos" ] && {{ printf 'T\trepos\t%s\0' "$n"; break; }}
      foreign=
      for p in "$r/.git" "$r"; do
        owner=$(stat -c '%u %U' -- "$p" 2>/dev/null) || {{ foreign='?'; break; }}
        [ "${{owner%% *}}" = "$me" ] || {{ foreign=${{owner#* }}; break; }}
      done
      if [ -n "$foreign" ]; then printf 'O\t%s\t%s\0' "$foreign" "$r"; continue; fi
      branch=$(g symbolic-ref --short -q HEAD || g rev-parse --short HEAD || echo '')
      remote=0; [ -n "$(g remote)" ] && remote=1
      unpushed=$(g rev-list --count HEAD --not --remotes) || unpushed=0
      status=$(g status --porcelain)
      changed=0; untracked=0
      [ -n "$status" ] && changed=$(printf '%s\n' "$status" | wc -l) && untracked=$(printf '%s\n' "$status" | grep -c '^??')
      stashes=$(g stash list | wc -l)
      printf 'G\t%s\t%s\t%s\t%s\t%s\t%s\t%s\0' "$remote" "${{unpushed:-0}}" "$changed" "$untracked" "$stashes" "$branch" "$r"
    done < "$work/repos"
  elif [ -s "$work/repos" ]; then
    printf 'T\tno_git\t0\0'
  fi
  df -P -B1 -- "${{roots[@]}}" 2>/dev/null | tail -n +2 | sort -u | while IFS= read -r line; do printf 'D\t%s\0' "$line"; done
fi
if command -v conda >/dev/null 2>&1; then
  conda env list 2>/dev/null | awk '!/^#/ && NF {{print $NF}}' | while IFS= read -r e; do printf 'E\tconda\t%s\0' "$e"; done
fi
py=$(command -v python3 || command -v python)
if [ -n "$py" ]; then
  count=$("$py" -m pip freeze 2>/dev/null | wc -l)
  [ "$count" -gt 0 ] && printf 'E\tpip\t%s\t%s\0' "$count" "$py"
fi
printf 'X\tend\0'
"#,
            given = words(&self.roots),
            disks = words(&self.data_disks),
            since = quote(&since),
            sent_at = quote(&sent_at),
            max_weights = MAX_WEIGHTS,
            max_repos = MAX_REPOS,
        )
    }
}

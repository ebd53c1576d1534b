//! The shell text a job runs on the instance, and the parsers for what it prints back. Pure, so
//! every piece is tested here without a connection; every value goes through `shell::quote`.
//!
//! Folder of one job (`~/.leasehold/jobs/<id>/`):
//! - `script` — what the job runs (bash when the instance has it, else sh)
//! - `run`    — the wrapper: records its pid, runs `script` with all three streams redirected,
//!   then records the exit code
//! - `log`    — stdout and stderr of `script`, appended in the order written
//! - `pid`    — the wrapper's pid = the job's process group and session id
//! - `boot`   — the kernel boot id at start (a different one now means the instance restarted)
//! - `exit`   — the exit code, present once the script ended by itself
//! - `cancelled` — present once `cancel` ran
//!
//! Every small file is written to `NAME.tmp` and renamed, so a reader sees all of it or none.

use crate::shell::quote;

use super::{JobId, JobRoot};

/// Exit status of the start command when the job folder already exists (an id used twice).
pub(crate) const EXIT_EXISTS: u32 = 17;
/// Exit status of the start command when `setsid` or `nohup` is missing on the instance.
pub(crate) const EXIT_NO_SETSID: u32 = 18;
/// Exit status of the start command when the wrapper never wrote its pid.
pub(crate) const EXIT_NOT_STARTED: u32 = 19;
/// Exit status of the log stream when the job folder (or its log) is gone.
pub(crate) const EXIT_NO_LOG: u32 = 3;
/// The log stream polls every 0.2 s; after this many idle polls (1 s) it sends a heartbeat.
const HEARTBEAT_POLLS: u32 = 5;
/// Bytes of the backlog a log stream sends before the rest: one SSH packet that fits in a fresh
/// TCP connection's first flight (ten segments), so a re-attach shows its first lines one
/// round trip after the command starts rather than after slow start has carried 64 KiB.
const FIRST_PIECE: u64 = 4096;
/// How often the log stream sends a heartbeat while the log is idle.
pub(crate) const HEARTBEAT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// The wrapper the job runs as, in its own session (so its own process group). `$1` is the
/// job folder. It writes its pid first, so the start command can return as soon as it exists.
const RUNNER: &str = r#"d=$1
printf '%s\n' "$$" > "$d/pid.tmp" && mv -f "$d/pid.tmp" "$d/pid"
cd "$HOME" 2>/dev/null || cd /
if command -v bash >/dev/null 2>&1; then
  bash "$d/script" </dev/null >>"$d/log" 2>&1
else
  sh "$d/script" </dev/null >>"$d/log" 2>&1
fi
code=$?
printf '%s\n' "$code" > "$d/exit.tmp" && mv -f "$d/exit.tmp" "$d/exit"
"#;

/// Read by a user's own command (`job start -- CMD`) before it runs: the environment an
/// interactive login bash of this account has, as the user's terminal would (PATH and the
/// variables that `~/.bashrc` sets: conda's `conda init` block, CUDA, pyenv). A job runs with
/// sshd's bare environment otherwise, and on a typical image the `.bashrc` stops early for a
/// non-interactive shell, so `python` would be the system's, not conda's. The same way VS Code's
/// remote server reads the shell environment: `bash -ilc`, its output after a marker, at most
/// 10 s (a `.bashrc` that starts tmux or another shell must not hold the job), skipped without
/// `timeout`. `export -p` prints each variable quoted for bash to read back.
const SHELL_ENVIRONMENT: &str = r#"if command -v bash >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then
  __leasehold_env=$(timeout 10 bash -ilc 'printf "\n%s\n" __LEASEHOLD_ENVIRONMENT__; export -p' </dev/null 2>/dev/null | sed -n '/^__LEASEHOLD_ENVIRONMENT__$/,$p' | sed 1d)
  eval "$__leasehold_env" 2>/dev/null
  unset __leasehold_env
fi
"#;

/// A user's own command as a job script: run in the environment of their interactive shell
/// (see [`SHELL_ENVIRONMENT`]).
pub(crate) fn in_shell_environment(command: &str) -> String {
    format!("{SHELL_ENVIRONMENT}{command}\n")
}

/// Shell functions shared by the status, stream and cancel commands. `alive PID` is true when
/// the wrapper runs (a zombie left by an init that never reaps does not count); `same_boot` is
/// true when the instance has not restarted since the job started.
const HELPERS: &str = r#"boot_now() { cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown; }
same_boot() { [ "$(boot_now)" = "$(cat "$d/boot" 2>/dev/null)" ]; }
alive() {
  [ -n "$1" ] || return 1
  kill -0 "$1" 2>/dev/null || return 1
  if [ -r "/proc/$1/stat" ]; then
    read -r s < "/proc/$1/stat" || return 0
    set -- ${s##*) }
    [ "$1" != Z ] || return 1
  fi
  return 0
}
members() {
  for f in /proc/[0-9]*/stat; do
    read -r s 2>/dev/null < "$f" || continue
    p=${f#/proc/}; p=${p%/stat}
    set -- ${s##*) }
    [ "$4" = "$sid" ] || continue
    [ "$1" != Z ] || continue
    [ "$p" != "$$" ] || continue
    echo "$p"
  done
}
"#;

fn dir_assignment(root: &JobRoot, id: &JobId) -> String {
    format!("d={}\n", root.dir_expr(id))
}

/// Create the job folder, write the script and wrapper, and start the wrapper detached:
/// `setsid` (own session and process group), `nohup`, stdin from /dev/null, stdout and stderr
/// away from the SSH channel. Prints the pid once the wrapper has recorded it.
pub(crate) fn start(root: &JobRoot, id: &JobId, script: &str) -> String {
    format!(
        r#"{dir}umask 077
command -v setsid >/dev/null 2>&1 && command -v nohup >/dev/null 2>&1 || {{ echo "leasehold: setsid or nohup is missing on this machine" >&2; exit {no_setsid}; }}
[ ! -e "$d" ] || {{ echo "leasehold: the job folder $d already exists" >&2; exit {exists}; }}
mkdir -p "$d" || exit 1
printf '%s' {script} > "$d/script.tmp" && mv -f "$d/script.tmp" "$d/script" || exit 1
printf '%s' {runner} > "$d/run.tmp" && mv -f "$d/run.tmp" "$d/run" || exit 1
(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown) > "$d/boot.tmp" && mv -f "$d/boot.tmp" "$d/boot" || exit 1
: > "$d/log" || exit 1
setsid nohup sh "$d/run" "$d" </dev/null >/dev/null 2>&1 &
i=0
while [ ! -f "$d/pid" ] && [ "$i" -lt 200 ]; do sleep 0.05; i=$((i+1)); done
[ -f "$d/pid" ] || {{ echo "leasehold: the job did not start" >&2; exit {not_started}; }}
cat "$d/pid"
"#,
        dir = dir_assignment(root, id),
        script = quote(script),
        runner = quote(RUNNER),
        no_setsid = EXIT_NO_SETSID,
        exists = EXIT_EXISTS,
        not_started = EXIT_NOT_STARTED,
    )
}

/// Print `key=value` lines describing the job (see [`RemoteStatus::parse`]). The wrapper's
/// liveness is read before the exit file: a wrapper that ends in between has written it.
pub(crate) fn status(root: &JobRoot, id: &JobId) -> String {
    format!(
        r#"{dir}{HELPERS}[ -d "$d" ] || {{ echo folder=0; exit 0; }}
echo folder=1
pid=$(cat "$d/pid" 2>/dev/null)
if same_boot; then echo same_boot=1; else echo same_boot=0; fi
if alive "$pid"; then echo alive=1; else echo alive=0; fi
[ -f "$d/exit" ] && echo "exit=$(cat "$d/exit")"
[ -f "$d/cancelled" ] && echo cancelled=1
echo "log_bytes=$(wc -c < "$d/log" 2>/dev/null || echo 0)"
exit 0
"#,
        dir = dir_assignment(root, id),
    )
}

/// Stream the log from byte `offset` (0-based) until the job is over. Whether the job is over is
/// decided *before* the log size is read, so once it is over the size read is final and every
/// byte is sent exactly once. Bytes are cut with `tail -c +K | head -c N` so nothing past the
/// size read goes out in this round.
///
/// What the log already holds goes out first, before the job's state is read (a few processes
/// fewer before a re-attach shows its first new byte), and of that only [`FIRST_PIECE`] bytes,
/// the rest a moment later: sshd packs whatever it reads at once into one SSH packet (up to
/// 64 KiB), the reader can use none of it before the whole packet is in, and a fresh connection
/// in TCP slow start carries 64 KiB only after a few round trips.
///
/// While the log is idle a newline goes to stderr once a second (and once at the start): the
/// heartbeat by which the reader tells a quiet job from a dead link (see `attach`). It never
/// mixes with the log, which is stdout only.
pub(crate) fn stream(root: &JobRoot, id: &JobId, offset: u64) -> String {
    format!(
        r#"{dir}{HELPERS}[ -f "$d/log" ] || exit {no_log}
off={offset}
idle=0
printf '\n' >&2
size=$(wc -c < "$d/log") || exit {no_log}
size=$((size + 0))
[ "$size" -le $((off + {first})) ] || size=$((off + {first}))
if [ "$size" -gt "$off" ]; then
  tail -c +$((off + 1)) "$d/log" | head -c $((size - off)) || exit 1
  off=$size
fi
while :; do
  over=0
  pid=$(cat "$d/pid" 2>/dev/null)
  if [ -f "$d/exit" ] || [ -f "$d/cancelled" ] || ! same_boot || ! alive "$pid"; then over=1; fi
  [ -f "$d/log" ] || exit {no_log}
  size=$(wc -c < "$d/log") || exit {no_log}
  size=$((size + 0))
  if [ "$size" -gt "$off" ]; then
    tail -c +$((off + 1)) "$d/log" | head -c $((size - off)) || exit 1
    off=$size
    idle=0
  elif [ "$over" = 1 ]; then
    exit 0
  else
    sleep 0.2
    idle=$((idle + 1))
    if [ "$idle" -ge {beats} ]; then printf '\n' >&2 || exit 1; idle=0; fi
  fi
  [ "$over" = 0 ] || exit 0
done
"#,
        dir = dir_assignment(root, id),
        no_log = EXIT_NO_LOG,
        beats = HEARTBEAT_POLLS,
        first = FIRST_PIECE,
    )
}

/// Mark the job cancelled, TERM its whole session (process group and any group a child made),
/// wait up to `grace_secs`, then KILL what is left, and list what still survives.
pub(crate) fn cancel(root: &JobRoot, id: &JobId, grace_secs: u32) -> String {
    let tenths = grace_secs.saturating_mul(10);
    format!(
        r#"{dir}{HELPERS}[ -d "$d" ] || {{ echo folder=0; exit 0; }}
echo folder=1
sid=$(cat "$d/pid" 2>/dev/null)
if [ -f "$d/exit" ]; then echo "exit=$(cat "$d/exit")"; exit 0; fi
if ! same_boot; then echo same_boot=0; exit 0; fi
[ -f "$d/cancelled" ] || {{ : > "$d/cancelled.tmp" && mv -f "$d/cancelled.tmp" "$d/cancelled"; }}
[ -n "$sid" ] || exit 0
kill -TERM -- "-$sid" 2>/dev/null
for p in $(members); do kill -TERM "$p" 2>/dev/null; done
i=0
while [ -n "$(members)" ] && [ "$i" -lt {tenths} ]; do sleep 0.1; i=$((i+1)); done
if [ -n "$(members)" ]; then
  echo killed=1
  kill -KILL -- "-$sid" 2>/dev/null
  for p in $(members); do kill -KILL "$p" 2>/dev/null; done
  sleep 0.3
fi
for p in $(members); do
  echo "left=$p $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)"
done
exit 0
"#,
        dir = dir_assignment(root, id),
    )
}

/// Remove the job folder (after the user is done with the log).
pub(crate) fn remove(root: &JobRoot, id: &JobId) -> String {
    format!(
        "{dir}[ ! -f \"$d/pid\" ] || [ -f \"$d/exit\" ] || [ -f \"$d/cancelled\" ] || exit 4\nrm -rf \"$d\"\n",
        dir = dir_assignment(root, id)
    )
}

/// What the status command saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RemoteStatus {
    pub folder: bool,
    pub same_boot: bool,
    pub alive: bool,
    pub exit: Option<i32>,
    pub cancelled: bool,
    pub log_bytes: u64,
}

impl RemoteStatus {
    /// Read the `key=value` lines of [`status`]. Unknown lines are ignored; a missing `folder`
    /// line means the output was not ours (`None`).
    pub fn parse(text: &str) -> Option<Self> {
        let mut status = Self::default();
        let mut saw_folder = false;
        for line in text.lines() {
            let Some((key, value)) = line.trim().split_once('=') else {
                continue;
            };
            let value = value.trim();
            match key {
                "folder" => {
                    saw_folder = true;
                    status.folder = value == "1";
                }
                "same_boot" => status.same_boot = value == "1",
                "alive" => status.alive = value == "1",
                "exit" => status.exit = value.parse().ok(),
                "cancelled" => status.cancelled = value == "1",
                "log_bytes" => status.log_bytes = value.parse().unwrap_or(0),
                _ => {}
            }
        }
        saw_folder.then_some(status)
    }
}

/// What the cancel command saw and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RemoteCancel {
    pub folder: bool,
    /// The job had already ended by itself with this code; nothing was killed.
    pub already_exited: Option<i32>,
    /// The instance restarted since the job started; nothing of it can be running.
    pub other_boot: bool,
    /// TERM was not enough; KILL was sent.
    pub killed: bool,
    /// `pid command…` of each process that survived.
    pub left: Vec<String>,
}

impl RemoteCancel {
    pub fn parse(text: &str) -> Self {
        let mut report = Self::default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            match key.trim() {
                "folder" => report.folder = value.trim() == "1",
                "exit" => report.already_exited = value.trim().parse().ok(),
                "same_boot" => report.other_boot = value.trim() == "0",
                "killed" => report.killed = value.trim() == "1",
                "left" => report.left.push(value.trim().to_owned()),
                _ => {}
            }
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_parse_into_fields() {
        let status = RemoteStatus::parse(
            "folder=1\nsame_boot=1\nalive=0\nexit=3\nlog_bytes=    1024\nnoise\n",
        )
        .expect("ours");
        assert_eq!(
            status,
            RemoteStatus {
                folder: true,
                same_boot: true,
                alive: false,
                exit: Some(3),
                cancelled: false,
                log_bytes: 1024
            },
            "BSD wc pads with spaces; the size must still be read"
        );
        assert_eq!(
            RemoteStatus::parse("welcome to the instance\n"),
            None,
            "text without our lines is not a status"
        );
    }

    #[test]
    fn cancel_lines_list_what_was_left() {
        let report =
            RemoteCancel::parse("folder=1\nkilled=1\nleft=4242 sleep 600 \nleft=4243 python x\n");
        assert!(report.killed);
        assert_eq!(report.left, vec!["4242 sleep 600", "4243 python x"]);
    }

    #[test]
    fn every_generated_command_is_valid_shell() {
        let id = JobId::parse("j-test-1").expect("valid");
        let hostile = "echo '$(rm -rf ~)' \"`id`\"; 空格";
        for root in [
            JobRoot::Home,
            JobRoot::Folder("/tmp/a dir/with 'quotes'".into()),
        ] {
            for text in [
                start(&root, &id, hostile),
                status(&root, &id),
                stream(&root, &id, 42),
                cancel(&root, &id, 3),
                remove(&root, &id),
            ] {
                let out = std::process::Command::new("sh")
                    .arg("-n")
                    .arg("-c")
                    .arg(&text)
                    .output()
                    .expect("sh runs");
                assert!(
                    out.status.success(),
                    "sh -n rejected:\n{text}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

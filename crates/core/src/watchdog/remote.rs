//! The POSIX sh text that installs, reads and removes the watchdog on the instance, and the
//! parsers for what it prints back. Pure; every value goes through `shell::quote`.
//!
//! Files in the state folder: `watchdog.sh` (the script), `pid`, `log`, `state` (the latest
//! sample), `settings`, `boot` (which restart hook was applied).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::script::state_dir_sh;
use crate::shell::quote;

/// Exit status of the install command when `setsid` or `nohup` is missing.
pub(crate) const EXIT_NO_SETSID: u32 = 18;
/// Exit status of the install command when the watchdog did not come up.
pub(crate) const EXIT_NOT_STARTED: u32 = 19;

/// The tag on every line the watchdog adds outside its folder (crontab, profile hook).
const TAG: &str = "# leasehold-watchdog";
const UNIT: &str = "/etc/systemd/system/leasehold-watchdog.service";
const PROFILE_HOOK: &str = "/etc/profile.d/leasehold-watchdog.sh";
/// Files the watchdog writes in its folder; removal deletes these and then the folder if empty,
/// never a whole tree (the folder may be one the user chose).
const FILES: [&str; 9] = [
    "watchdog.sh",
    "watchdog.sh.tmp",
    "pid",
    "log",
    "log.tmp",
    "state",
    "state.tmp",
    "settings",
    "settings.tmp",
];

/// What brings the watchdog back after the instance restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum BootHook {
    /// A systemd unit, enabled (systemd runs as PID 1 and we are root).
    Systemd,
    /// An `@reboot` line in the user's crontab (a cron daemon runs).
    Cron,
    /// `/etc/profile.d`: it starts again at the first login shell after a restart (AutoDL-style
    /// containers, which have neither systemd nor a running cron).
    Login,
    /// Nothing could be set up: after a restart it must be installed again.
    None,
}

impl BootHook {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Systemd => "systemd",
            Self::Cron => "cron",
            Self::Login => "login",
            Self::None => "none",
        }
    }

    fn parse(text: &str) -> Self {
        match text.trim() {
            "systemd" => Self::Systemd,
            "cron" => Self::Cron,
            "login" => Self::Login,
            _ => Self::None,
        }
    }

    /// One plain sentence on what happens after a restart.
    pub fn explain(self) -> &'static str {
        match self {
            Self::Systemd => "after a restart systemd starts it again (unit leasehold-watchdog.service)",
            Self::Cron => "after a restart cron starts it again (an @reboot line in the crontab)",
            Self::Login => "after a restart it starts again at the first login (/etc/profile.d); until someone logs in, nothing watches",
            Self::None => "after a restart it does not start again by itself: no systemd, no running cron, and /etc/profile.d is not writable; install it again",
        }
    }
}

/// Shell functions the install, status and remove commands share.
fn helpers() -> String {
    format!(
        r#"tag={tag}
unit={unit}
hook={hook}
alive() {{
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 1
  [ "$(tr '\0' '\n' < "/proc/$1/cmdline" 2>/dev/null | head -n 1)" = leasehold-watchdog ]
}}
remove_hooks() {{
  if [ -f "$unit" ]; then
    command -v systemctl >/dev/null 2>&1 && systemctl disable leasehold-watchdog.service >/dev/null 2>&1
    rm -f "$unit" && echo hook_removed=systemd
    command -v systemctl >/dev/null 2>&1 && systemctl daemon-reload >/dev/null 2>&1
  fi
  if command -v crontab >/dev/null 2>&1 && crontab -l 2>/dev/null | grep -q -F "$tag"; then
    crontab -l 2>/dev/null | grep -v -F "$tag" | crontab - && echo hook_removed=cron
  fi
  if [ -f "$hook" ]; then rm -f "$hook" && echo hook_removed=login; fi
}}
"#,
        tag = quote(TAG),
        unit = quote(UNIT),
        hook = quote(PROFILE_HOOK),
    )
}

/// Stop any copy, write the script, set up the restart hook that this machine allows, start it
/// detached. Prints `pid=`, `boot=` and `dir=` lines.
pub(crate) fn install(state_dir: &str, script: &str) -> String {
    format!(
        r#"d={dir}
{helpers}umask 077
command -v setsid >/dev/null 2>&1 && command -v nohup >/dev/null 2>&1 || {{ echo "leasehold: setsid or nohup is missing on this machine" >&2; exit {no_setsid}; }}
bash_path=$(command -v bash) || {{ echo "leasehold: bash is missing on this machine" >&2; exit {no_setsid}; }}
mkdir -p "$d" && d=$(cd "$d" && pwd -P) || exit 1
[ -f "$d/watchdog.sh" ] && bash "$d/watchdog.sh" stop >/dev/null 2>&1
remove_hooks >/dev/null
printf '%s' {script} > "$d/watchdog.sh.tmp" && mv -f "$d/watchdog.sh.tmp" "$d/watchdog.sh" || exit 1
chmod 700 "$d/watchdog.sh"
boot=none
case "$d$bash_path" in
  *[!A-Za-z0-9._/-]*) ;;
  *)
    if [ -d /run/systemd/system ] && [ "$(id -u)" = 0 ] && command -v systemctl >/dev/null 2>&1; then
      printf '%s\n' '[Unit]' 'Description=Leasehold watchdog: powers this machine off when idle' 'After=network.target' '' '[Service]' "ExecStart=$bash_path $d/watchdog.sh run" 'Restart=no' '' '[Install]' 'WantedBy=multi-user.target' > "$unit" \
        && systemctl daemon-reload >/dev/null 2>&1 && systemctl enable leasehold-watchdog.service >/dev/null 2>&1 && boot=systemd
    fi
    cron_runs=0
    for c in /proc/[0-9]*/comm; do
      read -r n 2>/dev/null < "$c" || continue
      case $n in cron|crond) cron_runs=1; break ;; esac
    done
    if [ "$boot" = none ] && [ "$cron_runs" = 1 ] && command -v crontab >/dev/null 2>&1; then
      {{ crontab -l 2>/dev/null | grep -v -F "$tag"; echo "@reboot $bash_path $d/watchdog.sh start >/dev/null 2>&1 $tag"; }} | crontab - && boot=cron
    fi
    if [ "$boot" = none ] && [ -d /etc/profile.d ] && [ -w /etc/profile.d ]; then
      printf '%s\n' "$tag: start the watchdog again after a restart (no systemd or cron here)" "[ -r $d/watchdog.sh ] && $bash_path $d/watchdog.sh start >/dev/null 2>&1" > "$hook" && boot=login
    fi
    ;;
esac
printf '%s\n' "$boot" > "$d/boot"
pid=$(bash "$d/watchdog.sh" start) || {{ echo "leasehold: the watchdog did not start" >&2; tail -n 5 "$d/log" >&2 2>/dev/null; exit {not_started}; }}
echo "pid=$pid"
echo "boot=$boot"
echo "dir=$d"
"#,
        dir = state_dir_sh(state_dir),
        helpers = helpers(),
        script = quote(script),
        no_setsid = EXIT_NO_SETSID,
        not_started = EXIT_NOT_STARTED,
    )
}

/// Print what the watchdog is doing: `key=value` lines, then `[settings]`, `[state]` and `[log]`
/// sections (the newest `log_lines` decisions).
pub(crate) fn status(state_dir: &str, log_lines: u32) -> String {
    format!(
        r#"d={dir}
{helpers}[ -d "$d" ] || {{ echo installed=0; exit 0; }}
d=$(cd "$d" && pwd -P) || exit 1
if [ -f "$d/watchdog.sh" ]; then echo installed=1; else echo installed=0; fi
echo "dir=$d"
pid=$(cat "$d/pid" 2>/dev/null)
if alive "$pid"; then echo running=1; echo "pid=$pid"; else echo running=0; fi
boot=$(cat "$d/boot" 2>/dev/null)
echo "boot=$boot"
in_place=0
case $boot in
  systemd) command -v systemctl >/dev/null 2>&1 && systemctl is-enabled leasehold-watchdog.service >/dev/null 2>&1 && in_place=1 ;;
  cron) crontab -l 2>/dev/null | grep -q -F "$tag" && in_place=1 ;;
  login) [ -f "$hook" ] && in_place=1 ;;
esac
echo "boot_in_place=$in_place"
echo '[settings]'
cat "$d/settings" 2>/dev/null
echo '[state]'
cat "$d/state" 2>/dev/null
echo '[log]'
tail -n {log_lines} "$d/log" 2>/dev/null
exit 0
"#,
        dir = state_dir_sh(state_dir),
        helpers = helpers(),
    )
}

/// Stop the watchdog, take its restart hooks out, delete its files and then its folder if
/// nothing else is in it. Prints `was_running=`, `hook_removed=` and `folder_removed=` lines.
pub(crate) fn remove(state_dir: &str) -> String {
    let files: Vec<String> = FILES
        .iter()
        .map(|f| format!("\"$d\"/{}", quote(f)))
        .collect();
    format!(
        r#"d={dir}
{helpers}if [ -d "$d" ]; then
  pid=$(cat "$d/pid" 2>/dev/null)
  if alive "$pid"; then
    echo was_running=1
    kill -TERM "$pid" 2>/dev/null
    i=0
    while alive "$pid" && [ "$i" -lt 100 ]; do sleep 0.05; i=$((i+1)); done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null
  else
    echo was_running=0
  fi
fi
remove_hooks
if [ -d "$d" ]; then
  rm -f {files} "$d/boot"
  rmdir "$d" 2>/dev/null && echo folder_removed=1
fi
exit 0
"#,
        dir = state_dir_sh(state_dir),
        helpers = helpers(),
        files = files.join(" "),
    )
}

/// One decision from the log: `TIME WHAT DETAIL…`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct LogLine {
    pub at: String,
    pub what: String,
    pub detail: String,
}

impl LogLine {
    fn parse(line: &str) -> Option<Self> {
        let mut parts = line.splitn(3, ' ');
        let at = parts.next()?;
        let what = parts.next()?;
        // A timestamp first, or it is output of a hook (kept out of the decisions).
        let looks_like_time = at.len() == 20 && at.ends_with('Z') && at.as_bytes()[4] == b'-';
        (looks_like_time && !what.is_empty()).then(|| Self {
            at: at.to_owned(),
            what: what.chars().take(40).collect(),
            detail: parts.next().unwrap_or("").chars().take(500).collect(),
        })
    }
}

/// What the status command printed, as sections.
#[derive(Debug, Default)]
pub(crate) struct RemoteStatus {
    pub head: BTreeMap<String, String>,
    pub settings: BTreeMap<String, String>,
    pub state: BTreeMap<String, String>,
    pub log: Vec<LogLine>,
}

/// Most keys and lines read from the instance; it is untrusted, so nothing grows without bound.
const MAX_KEYS: usize = 64;
const MAX_VALUE_CHARS: usize = 2000;

impl RemoteStatus {
    pub fn parse(text: &str) -> Option<Self> {
        let mut status = Self::default();
        let mut section = "head";
        let mut saw_installed = false;
        for line in text.lines() {
            match line {
                "[settings]" | "[state]" | "[log]" => {
                    section = &line[1..line.len() - 1];
                    continue;
                }
                _ => {}
            }
            if section == "log" {
                if status.log.len() < 500 {
                    status.log.extend(LogLine::parse(line));
                }
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let map = match section {
                "settings" => &mut status.settings,
                "state" => &mut status.state,
                _ => &mut status.head,
            };
            if map.len() < MAX_KEYS {
                saw_installed |= section == "head" && key == "installed";
                map.insert(
                    key.chars().take(40).collect(),
                    value.chars().take(MAX_VALUE_CHARS).collect(),
                );
            }
        }
        saw_installed.then_some(status)
    }
}

/// `key=value` lines into a map (install and remove answers), last value wins; repeated
/// `hook_removed` lines are kept in order.
pub(crate) fn key_values(text: &str) -> (BTreeMap<String, String>, Vec<String>) {
    let mut map = BTreeMap::new();
    let mut hooks = Vec::new();
    for line in text.lines().take(200) {
        if let Some((key, value)) = line.split_once('=') {
            if key == "hook_removed" {
                hooks.push(value.trim().to_owned());
            } else if map.len() < MAX_KEYS {
                map.insert(
                    key.to_owned(),
                    value.chars().take(MAX_VALUE_CHARS).collect(),
                );
            }
        }
    }
    (map, hooks)
}

pub(crate) fn boot_hook(text: Option<&String>) -> BootHook {
    text.map_or(BootHook::None, |t| BootHook::parse(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_sections_are_read_and_hook_output_is_not_a_decision() {
        let text = "installed=1\ndir=/root/.leasehold/watchdog\nrunning=1\npid=42\nboot=cron\nboot_in_place=1\n\
[settings]\nidle_s=1800\npower_off=shutdown -h now\n[state]\nphase=idle\nidle_s=120\n\
[log]\n2026-12-01T17:00:00Z start pid 42; idle 1800s\nEverything up-to-date\n2026-12-01T17:01:00Z idle 60s of 1800s (gpu=0%)\n";
        let status = RemoteStatus::parse(text).expect("a status");
        assert_eq!(status.head["pid"], "42");
        assert_eq!(status.settings["power_off"], "shutdown -h now");
        assert_eq!(status.state["phase"], "idle");
        assert_eq!(
            status.log.len(),
            2,
            "the pre-stop hook's own output is not a decision"
        );
        assert_eq!(status.log[1].what, "idle");
        assert_eq!(status.log[1].detail, "60s of 1800s (gpu=0%)");
    }

    #[test]
    fn an_answer_without_the_installed_line_is_not_a_status() {
        assert!(RemoteStatus::parse("bash: line 1: syntax error\n").is_none());
    }

    #[test]
    fn removal_deletes_named_files_never_a_whole_tree() {
        let text = remove("/root");
        assert!(
            !text.contains("rm -rf"),
            "a chosen folder like /root must survive removal"
        );
        assert!(text.contains("rmdir"));
    }
}

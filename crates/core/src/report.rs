//! "Copy a problem report" (Settings): this build's version, the OS, the last 500 lines of the
//! app's log and the code of the last operation that failed, with every secret and host hidden
//! by [`redact::redact_everything`]. The user sees the whole text before copying it; the app never
//! sends it anywhere.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use regex::Regex;
use serde::Serialize;
use ts_rs::TS;

use crate::redact;

/// How many log lines a report carries.
pub const LOG_LINES: usize = 500;
/// The most read from the end of one log file (500 lines fit many times).
const TAIL_BYTES: u64 = 2 * 1024 * 1024;
/// A longer log line is cut.
const MAX_LINE_CHARS: usize = 2000;

/// The report, already redacted, as shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct ProblemReport {
    pub text: String,
    /// The code of the last failed operation found in the log, if any.
    pub error_code: Option<String>,
    /// How many log lines it carries.
    pub log_lines: usize,
}

/// `code: "stop.could_not_confirm"` as a failed command's `ApiError` is logged.
static LOGGED_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"code: "([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)""#).expect("logged code pattern")
});

/// The code of the last failed operation in `lines`.
pub fn last_error_code(lines: &[String]) -> Option<String> {
    lines.iter().rev().find_map(|line| {
        LOGGED_CODE
            .captures_iter(line)
            .last()
            .map(|found| found[1].to_owned())
    })
}

/// This computer's OS as a report names it (`Debian GNU/Linux 13 (trixie), x86_64`).
pub fn os_description() -> String {
    let name = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| {
            text.lines().find_map(|line| {
                line.strip_prefix("PRETTY_NAME=")
                    .map(|value| value.trim_matches('"').to_owned())
            })
        })
        .unwrap_or_else(|| std::env::consts::OS.to_owned());
    format!("{name}, {}", std::env::consts::ARCH)
}

/// The last `count` lines of the app's logs in `dir` (`leasehold.*.log`, newest last).
pub fn log_tail(dir: &Path, count: usize) -> Vec<String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| {
                    path.file_name()
                        .and_then(|name| name.to_str())
                        .is_some_and(|name| name.starts_with("leasehold") && name.ends_with(".log"))
                })
                .collect()
        })
        .unwrap_or_default();
    // The daily files carry their date in the name, so name order is time order.
    files.sort();
    let mut lines: Vec<String> = Vec::new();
    for file in files.iter().rev() {
        let mut older = tail_of(file);
        older.append(&mut lines);
        lines = older;
        if lines.len() >= count {
            break;
        }
    }
    let skip = lines.len().saturating_sub(count);
    lines.split_off(skip)
}

fn tail_of(path: &Path) -> Vec<String> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let length = file.metadata().map(|meta| meta.len()).unwrap_or(0);
    let start = length.saturating_sub(TAIL_BYTES);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if file.take(TAIL_BYTES).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<String> = text
        .lines()
        .map(|line| line.chars().take(MAX_LINE_CHARS).collect())
        .collect();
    // A tail read from the middle of a file starts inside a line.
    if start > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    lines
}

/// Pure: the report's text from what was gathered, redacted.
pub fn compose(version: &str, os: &str, log: &[String], now: DateTime<Utc>) -> ProblemReport {
    let error_code = last_error_code(log);
    let mut text = String::new();
    text.push_str("Leasehold problem report\n");
    text.push_str(&format!("version: {version}\n"));
    text.push_str(&format!("os: {os}\n"));
    text.push_str(&format!("made: {}\n", now.format("%Y-%m-%dT%H:%M:%SZ")));
    text.push_str(&format!(
        "last failed operation: {}\n",
        error_code.as_deref().unwrap_or("none in the log")
    ));
    text.push_str(&format!("\nlast {} log lines:\n", log.len()));
    for line in log {
        text.push_str(line);
        text.push('\n');
    }
    ProblemReport {
        text: redact::redact_everything(&text),
        error_code,
        log_lines: log.len(),
    }
}

/// The report for this computer: `log_dir`'s last [`LOG_LINES`] lines.
pub fn problem_report(log_dir: &Path, version: &str, now: DateTime<Utc>) -> ProblemReport {
    compose(
        version,
        &os_description(),
        &log_tail(log_dir, LOG_LINES),
        now,
    )
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn a_seeded_log_leaves_no_key_password_token_or_host_in_the_report() {
        let dir = tempfile::tempdir().unwrap();
        let old: String = (0..600).map(|n| format!("old line {n}\n")).collect();
        std::fs::write(dir.path().join("leasehold.2026-12-03.log"), old).unwrap();
        let seeded = [
            r#"2026-12-04T10:00:00Z INFO account_add: provider key check key="rpa_SEEDEDKEY0123456789AB""#,
            "2026-12-04T10:00:01Z DEBUG team_connect: url=postgres://alice:Seeded-Pass-77@db.team-seeded.example:5432/ledger",
            "2026-12-04T10:00:02Z DEBUG webhook: posting to https://oapi.dingtalk.com/robot/send?access_token=SEEDEDTOKEN42",
            "2026-12-04T10:00:03Z INFO ssh: dialling root@gpu-seeded.autodl.com (198.51.100.23:38222) password: Seeded-Pw-9",
            r#"2026-12-04T10:00:04Z ERROR stop_now: error=ApiError { code: "stop.could_not_confirm", message: "no answer from 198.51.100.23" }"#,
        ];
        let mut today = String::new();
        for line in seeded {
            today.push_str(line);
            today.push('\n');
        }
        std::fs::write(dir.path().join("leasehold.2026-12-04.log"), today).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a log: host.example.org").unwrap();

        let now = Utc.with_ymd_and_hms(2026, 12, 4, 10, 5, 0).unwrap();
        let report = problem_report(dir.path(), "0.1.0", now);
        assert_eq!(
            report.log_lines, LOG_LINES,
            "the newest 500 lines, across files"
        );
        assert!(report.text.contains("old line 599"));
        assert!(
            !report.text.contains("old line 104\n"),
            "older lines left out"
        );
        assert_eq!(report.error_code.as_deref(), Some("stop.could_not_confirm"));
        assert!(report
            .text
            .contains("last failed operation: stop.could_not_confirm"));
        assert!(report.text.contains("version: 0.1.0"));
        for secret in [
            "SEEDEDKEY",
            "Seeded-Pass-77",
            "alice",
            "SEEDEDTOKEN42",
            "Seeded-Pw-9",
            "team-seeded",
            "gpu-seeded",
            "autodl.com",
            "198.51.100.23",
            "dingtalk",
            "host.example.org",
        ] {
            assert!(
                !report.text.contains(secret),
                "{secret} leaked:\n{}",
                report.text
            );
        }
    }
}

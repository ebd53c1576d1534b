//! Reading an install log as it grows: the recipe's own markers (`::leasehold::step 2/5 …`) and
//! the progress lines of the tools it runs — pip, conda, curl, wget and `ollama pull` — become
//! one progress figure with an ETA. Pure: fed text and the time it arrived, so it is tested on
//! real captured output.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use ts_rs::TS;

/// One thing a log line says.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum LogEvent {
    Step {
        index: u32,
        total: u32,
        title: String,
    },
    Skip {
        text: String,
    },
    Ok {
        text: String,
    },
    Result {
        key: String,
        value: String,
    },
    Finding {
        code: String,
    },
    Fail {
        code: String,
        message: String,
    },
    Transfer(Transfer),
}

/// A download (or package fetch) in progress.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct Transfer {
    /// `pip`, `conda`, `curl`, `wget` or `ollama`.
    pub tool: String,
    /// What is downloaded, when the line says (a package, a layer digest).
    pub label: Option<String>,
    pub percent: Option<f64>,
    #[ts(type = "number | null")]
    pub done_bytes: Option<u64>,
    #[ts(type = "number | null")]
    pub total_bytes: Option<u64>,
    pub bytes_per_second: Option<f64>,
    /// Seconds left, as the tool estimated it.
    #[ts(type = "number | null")]
    pub eta_seconds: Option<u64>,
}

impl Transfer {
    fn new(tool: &str) -> Self {
        Self {
            tool: tool.to_owned(),
            label: None,
            percent: None,
            done_bytes: None,
            total_bytes: None,
            bytes_per_second: None,
            eta_seconds: None,
        }
    }
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|err| panic!("progress pattern {pattern:?}: {err}"))
}

static ANSI: LazyLock<Regex> = LazyLock::new(|| re(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]"));
static MARKER: LazyLock<Regex> = LazyLock::new(|| re(r"^::leasehold::(\w+)\s?(.*)$"));
static STEP: LazyLock<Regex> = LazyLock::new(|| re(r"^(\d+)/(\d+)\s+(.*)$"));
// `━━━━╸━━━ 6.1/16.3 MB 190.0 MB/s eta 0:00:01`
static PIP_BAR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"([\d.]+)/([\d.]+)\s*(bytes|kB|MB|GB)\s+(?:([\d.]+)\s*(bytes|kB|MB|GB)/s|\?)\s+eta\s+(\d+:\d{2}:\d{2}|-:--:--)",
    )
});
// `Downloading numpy-2.1.3-cp311-….whl (16.3 MB)`
static PIP_DOWNLOADING: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*Downloading\s+(\S+)\s+\(([\d.]+)\s*(bytes|kB|MB|GB)\)"));
// pip ≥ 24.1 `--progress-bar=raw`: `Progress 8192 of 52428800`
static PIP_RAW: LazyLock<Regex> = LazyLock::new(|| re(r"^Progress (\d+) of (\d+)$"));
// `libprotobuf-3.20.3   | 2.4 MB    | 6          |   7%`
static CONDA: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*(\S+)\s+\|\s+([\d.]+)\s*([KMGT]?i?B)\s+\|[^|]*\|\s*(\d+)%\s*$"));
// ` 55 28.6M   55 15.7M    0     0  8185k      0  0:00:03  0:00:01  0:00:02 8184k`
static CURL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*(\d+)\s+([\d.]+[kMGTP]?)\s+(\d+)\s+([\d.]+[kMGTP]?)\s+\d+\s+[\d.]+[kMGTP]?\s+([\d.]+[kMGTP]?)\s+[\d.]+[kMGTP]?\s+(\S+)\s+(\S+)\s+(\S+)\s+([\d.]+[kMGTP]?)\s*$",
    )
});
// `  3072K ........ ........ ........ ........ ........ ........ 20% 7.43M 2s`
static WGET: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^\s*(\d+)K[ .,]+\s(\d+)%\s+([\d.]+[KMG]?)[ =]\s*((?:\d+h)?(?:\d+m)?(?:[\d.]+s)?)\s*$")
});
// `Length: 30000000 (29M) [application/octet-stream]`
static WGET_LENGTH: LazyLock<Regex> = LazyLock::new(|| re(r"^Length: (\d+)"));
// `pulling 2bada8a74506:  10% ▕█████   ▏  470 MB/4.7 GB  5.2 MB/s  13m12s`
static OLLAMA: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^pulling ([0-9a-f]{6,})[.:\s]+(\d+)%(?:\s*▕[^▏]*▏)?(?:\s+([\d.]+)\s*(B|KB|MB|GB|TB)/([\d.]+)\s*(B|KB|MB|GB|TB))?(?:\s+([\d.]+)\s*(B|KB|MB|GB|TB)/s)?(?:\s+((?:\d+h)?(?:\d+m)?(?:\d+s)?))?\s*$",
    )
});

/// Bytes for `16.3` `MB` (decimal units, as pip, ollama and curl's k/M/G print them; conda and
/// wget print binary K/M).
fn bytes(value: &str, unit: &str) -> Option<u64> {
    let number: f64 = value.parse().ok()?;
    let factor = match unit {
        "" | "B" | "bytes" => 1.0,
        "kB" | "KB" | "k" => 1e3,
        "MB" | "M" => 1e6,
        "GB" | "G" => 1e9,
        "TB" | "T" => 1e12,
        "KiB" | "K" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "P" => 1e15,
        _ => return None,
    };
    // Sizes are far below 2^53, so the float holds them exactly enough.
    Some((number * factor).round() as u64)
}

/// curl prints `28.6M`, `4736k`, `0`: binary units (curl's meter counts 1024s).
fn curl_bytes(text: &str) -> Option<u64> {
    let (number, unit) = match text.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&text[..i], c),
        _ => (text, ' '),
    };
    let number: f64 = number.parse().ok()?;
    let factor = match unit {
        ' ' => 1.0,
        'k' | 'K' => 1024.0,
        'M' => 1024.0 * 1024.0,
        'G' => 1024.0 * 1024.0 * 1024.0,
        'T' => 1024f64.powi(4),
        'P' => 1024f64.powi(5),
        _ => return None,
    };
    Some((number * factor).round() as u64)
}

/// `0:00:03`, `1:02:03`, `13m12s`, `5s`, `2h3m` → seconds; `--:--:--`, `-:--:--` → None.
fn seconds(text: &str) -> Option<u64> {
    if text.contains(':') {
        let parts: Vec<u64> = text
            .split(':')
            .map(|p| p.parse().ok())
            .collect::<Option<_>>()?;
        return Some(parts.iter().fold(0, |acc, p| acc * 60 + p));
    }
    let mut total = 0f64;
    let mut number = String::new();
    let mut any = false;
    for c in text.chars() {
        match c {
            '0'..='9' | '.' => number.push(c),
            'h' | 'm' | 's' => {
                let n: f64 = number.parse().ok()?;
                total += n * match c {
                    'h' => 3600.0,
                    'm' => 60.0,
                    _ => 1.0,
                };
                number.clear();
                any = true;
            }
            _ => return None,
        }
    }
    (any && number.is_empty()).then(|| total.round() as u64)
}

/// What one log line says, if anything we know.
pub fn parse_line(raw: &str) -> Option<LogEvent> {
    let cleaned = ANSI.replace_all(raw, "");
    let line = cleaned.trim_end();
    if let Some(caps) = MARKER.captures(line.trim_start()) {
        let rest = caps[2].trim().to_owned();
        return match &caps[1] {
            "step" => STEP.captures(&rest).map(|s| LogEvent::Step {
                index: s[1].parse().unwrap_or(0),
                total: s[2].parse().unwrap_or(0),
                title: s[3].to_owned(),
            }),
            "skip" => Some(LogEvent::Skip { text: rest }),
            "ok" => Some(LogEvent::Ok { text: rest }),
            "result" => rest.split_once('=').map(|(k, v)| LogEvent::Result {
                key: k.to_owned(),
                value: v.to_owned(),
            }),
            "finding" => Some(LogEvent::Finding { code: rest }),
            "fail" => {
                let (code, message) = rest.split_once(' ').unwrap_or((rest.as_str(), ""));
                Some(LogEvent::Fail {
                    code: code.to_owned(),
                    message: message.to_owned(),
                })
            }
            _ => None,
        };
    }
    parse_tool_line(line).map(LogEvent::Transfer)
}

fn parse_tool_line(line: &str) -> Option<Transfer> {
    if let Some(c) = PIP_BAR.captures(line) {
        let mut t = Transfer::new("pip");
        t.done_bytes = bytes(&c[1], &c[3]);
        t.total_bytes = bytes(&c[2], &c[3]);
        t.bytes_per_second = c
            .get(4)
            .zip(c.get(5))
            .and_then(|(v, u)| bytes(v.as_str(), u.as_str()))
            .map(|b| b as f64);
        t.eta_seconds = seconds(&c[6]);
        t.percent = percent_of(t.done_bytes, t.total_bytes);
        return Some(t);
    }
    if let Some(c) = PIP_DOWNLOADING.captures(line) {
        let mut t = Transfer::new("pip");
        t.label = Some(c[1].to_owned());
        t.total_bytes = bytes(&c[2], &c[3]);
        t.done_bytes = Some(0);
        t.percent = Some(0.0);
        return Some(t);
    }
    if let Some(c) = PIP_RAW.captures(line.trim()) {
        let mut t = Transfer::new("pip");
        t.done_bytes = c[1].parse().ok();
        t.total_bytes = c[2].parse().ok();
        t.percent = percent_of(t.done_bytes, t.total_bytes);
        return Some(t);
    }
    if let Some(c) = OLLAMA.captures(line.trim_start()) {
        let mut t = Transfer::new("ollama");
        t.label = Some(c[1].to_owned());
        t.percent = c[2].parse().ok();
        if let (Some(d), Some(du), Some(tt), Some(tu)) = (c.get(3), c.get(4), c.get(5), c.get(6)) {
            t.done_bytes = bytes(d.as_str(), du.as_str());
            t.total_bytes = bytes(tt.as_str(), tu.as_str());
        }
        t.bytes_per_second = c
            .get(7)
            .zip(c.get(8))
            .and_then(|(v, u)| bytes(v.as_str(), u.as_str()))
            .map(|b| b as f64);
        t.eta_seconds = c.get(9).and_then(|e| seconds(e.as_str()));
        return Some(t);
    }
    if let Some(c) = CONDA.captures(line) {
        let mut t = Transfer::new("conda");
        t.label = Some(c[1].to_owned());
        // conda prints KB/MB/GB for 1024-based sizes.
        let unit = match &c[3] {
            "KB" | "KiB" => "KiB",
            "MB" | "MiB" => "MiB",
            "GB" | "GiB" => "GiB",
            other => other,
        };
        t.total_bytes = bytes(&c[2], unit);
        t.percent = c[4].parse().ok();
        t.done_bytes = t
            .total_bytes
            .zip(t.percent)
            .map(|(total, p)| (total as f64 * p / 100.0).round() as u64);
        return Some(t);
    }
    if let Some(c) = CURL.captures(line) {
        let mut t = Transfer::new("curl");
        t.percent = c[1].parse().ok();
        t.total_bytes = curl_bytes(&c[2]);
        t.done_bytes = curl_bytes(&c[4]);
        t.bytes_per_second = curl_bytes(&c[9]).map(|b| b as f64);
        t.eta_seconds = seconds(&c[8]);
        if t.total_bytes == Some(0) && t.percent == Some(0.0) {
            t.total_bytes = None;
        }
        return Some(t);
    }
    if let Some(c) = WGET.captures(line) {
        let mut t = Transfer::new("wget");
        t.done_bytes = c[1].parse::<u64>().ok().map(|k| k * 1024);
        t.percent = c[2].parse().ok();
        let rate = &c[3];
        let (n, u) = match rate.char_indices().last() {
            Some((i, ch)) if ch.is_ascii_alphabetic() => (&rate[..i], &rate[i..]),
            _ => (rate, ""),
        };
        t.bytes_per_second = n.parse::<f64>().ok().map(|v| {
            v * match u {
                "K" => 1024.0,
                "M" => 1024.0 * 1024.0,
                "G" => 1024.0 * 1024.0 * 1024.0,
                _ => 1.0,
            }
        });
        // At 100 % wget prints `=3.5s` (time taken), not a time left.
        t.eta_seconds = if line.contains('=') {
            Some(0)
        } else {
            seconds(&c[4])
        };
        return Some(t);
    }
    if let Some(c) = WGET_LENGTH.captures(line) {
        let mut t = Transfer::new("wget");
        t.total_bytes = c[1].parse().ok();
        t.done_bytes = Some(0);
        t.percent = Some(0.0);
        return Some(t);
    }
    None
}

fn percent_of(done: Option<u64>, total: Option<u64>) -> Option<f64> {
    match (done, total) {
        (Some(d), Some(t)) if t > 0 => Some((d as f64 * 100.0 / t as f64).min(100.0)),
        _ => None,
    }
}

/// Longest log line read for progress; the rest of a longer one is dropped.
pub const MAX_PROGRESS_LINE: usize = 64 * 1024;
/// Most skipped steps, results and findings kept: the progress is cloned into every piece of
/// log sent to the UI, so it must stay small whatever the log says.
pub const MAX_LISTED: usize = 100;

/// The progress of one job so far, folded from its log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct Progress {
    pub step: Option<u32>,
    pub steps: Option<u32>,
    pub step_title: Option<String>,
    /// The current download, if one is under way.
    pub transfer: Option<Transfer>,
    /// 0–100 over the whole recipe: finished steps plus the share of the current download.
    pub percent: Option<f64>,
    /// Seconds left in the current download (the tool's own estimate, else from the rate).
    #[ts(type = "number | null")]
    pub eta_seconds: Option<u64>,
    pub skipped: Vec<String>,
    pub results: BTreeMap<String, String>,
    pub findings: Vec<String>,
    pub failure: Option<(String, String)>,
    pub done: bool,
    #[serde(skip)]
    #[ts(skip)]
    pending: Vec<u8>,
    #[serde(skip)]
    #[ts(skip)]
    last_sample: Option<(f64, u64)>,
}

impl Progress {
    /// Feed a chunk of the log that arrived at `now_s` (seconds, any origin). Lines end at `\n`
    /// or `\r` (progress bars redraw with `\r`); a partial line waits for the next chunk. Each
    /// byte is looked at once, and a line longer than [`MAX_PROGRESS_LINE`] keeps only its
    /// start: no progress line is that long, and the instance must not grow our memory.
    pub fn feed(&mut self, chunk: &[u8], now_s: f64) {
        let mut start = 0;
        while let Some(offset) = chunk[start..]
            .iter()
            .position(|b| *b == b'\n' || *b == b'\r')
        {
            let end = start + offset;
            self.keep_partial(&chunk[start..end]);
            let line = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            self.line(&line, now_s);
            start = end + 1;
        }
        self.keep_partial(&chunk[start..]);
    }

    fn keep_partial(&mut self, bytes: &[u8]) {
        let room = MAX_PROGRESS_LINE.saturating_sub(self.pending.len());
        self.pending
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// Bytes held for the line not yet ended.
    pub fn pending_bytes(&self) -> usize {
        self.pending.len()
    }

    /// Apply one line.
    pub fn line(&mut self, line: &str, now_s: f64) {
        let Some(event) = parse_line(line) else {
            return;
        };
        match event {
            LogEvent::Step {
                index,
                total,
                title,
            } => {
                self.step = Some(index);
                self.steps = Some(total);
                self.step_title = Some(title);
                self.transfer = None;
                self.last_sample = None;
                self.eta_seconds = None;
            }
            LogEvent::Skip { text } if self.skipped.len() < MAX_LISTED => self.skipped.push(text),
            LogEvent::Skip { .. } => {}
            LogEvent::Ok { .. } => self.done = true,
            LogEvent::Result { key, value } => {
                if self.results.len() < MAX_LISTED || self.results.contains_key(&key) {
                    self.results.insert(key, value);
                }
            }
            LogEvent::Finding { code } if self.findings.len() < MAX_LISTED => {
                self.findings.push(code);
            }
            LogEvent::Finding { .. } => {}
            LogEvent::Fail { code, message } => self.failure = Some((code, message)),
            LogEvent::Transfer(mut transfer) => {
                if transfer.bytes_per_second.is_none() {
                    if let (Some((t0, b0)), Some(b1)) = (self.last_sample, transfer.done_bytes) {
                        if now_s > t0 && b1 >= b0 {
                            transfer.bytes_per_second = Some((b1 - b0) as f64 / (now_s - t0));
                        }
                    }
                }
                if let Some(done) = transfer.done_bytes {
                    self.last_sample = Some((now_s, done));
                }
                self.eta_seconds = transfer.eta_seconds.or_else(|| {
                    let rate = transfer.bytes_per_second.filter(|r| *r > 0.0)?;
                    let left = transfer.total_bytes?.checked_sub(transfer.done_bytes?)?;
                    Some((left as f64 / rate).round() as u64)
                });
                self.transfer = Some(transfer);
            }
        }
        self.percent = self.overall();
    }

    fn overall(&self) -> Option<f64> {
        if self.done {
            return Some(100.0);
        }
        let (step, steps) = (self.step?, self.steps?);
        if steps == 0 {
            return None;
        }
        let within = self
            .transfer
            .as_ref()
            .and_then(|t| t.percent)
            .unwrap_or(0.0)
            / 100.0;
        Some(((f64::from(step.saturating_sub(1)) + within) * 100.0 / f64::from(steps)).min(100.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transfer(line: &str) -> Transfer {
        match parse_line(line) {
            Some(LogEvent::Transfer(t)) => t,
            other => panic!("{line:?} should be a transfer, got {other:?}"),
        }
    }

    // Captured from `pip download --progress-bar on numpy==2.1.3` (pip 23.0.1) on this machine.
    #[test]
    fn pip_bars_and_download_lines() {
        let t = transfer(
            "     ━━━━━━━━━━━━━━╸━━━━━━━━━━━━━━━━━━━━━━━━━ 6.1/16.3 MB 190.0 MB/s eta 0:00:01",
        );
        assert_eq!(t.done_bytes, Some(6_100_000));
        assert_eq!(t.total_bytes, Some(16_300_000));
        assert_eq!(t.bytes_per_second, Some(190e6));
        assert_eq!(t.eta_seconds, Some(1));
        let t = transfer("     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 0.0/16.3 MB ? eta -:--:--");
        assert_eq!(
            (t.done_bytes, t.eta_seconds),
            (Some(0), None),
            "unknown rate"
        );
        let t = transfer("  Downloading numpy-2.1.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (16.3 MB)");
        assert_eq!(t.total_bytes, Some(16_300_000));
        assert!(t.label.is_some_and(|l| l.starts_with("numpy-2.1.3")));
        let t = transfer("Progress 8192 of 16384");
        assert_eq!(t.percent, Some(50.0), "pip --progress-bar=raw");
    }

    // Captured from `curl --limit-rate 8M -o /dev/null http://127.0.0.1:8765/big.bin` (\r split).
    #[test]
    fn curl_meter_lines() {
        let t = transfer(
            " 55 28.6M   55 15.7M    0     0  8185k      0  0:00:03  0:00:01  0:00:02 8184k",
        );
        assert_eq!(t.percent, Some(55.0));
        assert_eq!(t.eta_seconds, Some(2));
        assert_eq!(t.bytes_per_second, Some(8184.0 * 1024.0));
        assert_eq!(
            t.total_bytes,
            Some((28.6f64 * 1024.0 * 1024.0).round() as u64)
        );
        let t = transfer(
            "  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0",
        );
        assert_eq!((t.percent, t.eta_seconds), (Some(0.0), None));
        assert!(
            parse_line(
                "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current"
            )
            .is_none(),
            "the header is not progress"
        );
    }

    // Captured from `wget --limit-rate=8m --progress=dot:mega` on this machine.
    #[test]
    fn wget_dot_lines() {
        let t =
            transfer("  3072K ........ ........ ........ ........ ........ ........ 20% 7.43M 2s");
        assert_eq!(t.percent, Some(20.0));
        assert_eq!(t.eta_seconds, Some(2));
        assert_eq!(t.done_bytes, Some(3072 * 1024));
        let t = transfer(
            " 27648K ........ ........ ........ .                         100% 7.97M=3.5s",
        );
        assert_eq!((t.percent, t.eta_seconds), (Some(100.0), Some(0)));
        let t = transfer("Length: 30000000 (29M) [application/octet-stream]");
        assert_eq!(t.total_bytes, Some(30_000_000));
    }

    // Lines as printed by `conda create` / `conda install` in published logs.
    #[test]
    fn conda_package_lines() {
        let t = transfer("libprotobuf-3.20.3   | 2.4 MB    | 6          |   7% ");
        assert_eq!(t.label.as_deref(), Some("libprotobuf-3.20.3"));
        assert_eq!(t.percent, Some(7.0));
        let t = transfer("icu-68.1             | 13.0 MB   | ########## | 100%");
        assert_eq!(t.percent, Some(100.0));
        assert_eq!(t.total_bytes, Some((13.0 * 1024.0 * 1024.0) as u64));
    }

    // Lines as printed by `ollama pull qwen2.5:7b` in published logs.
    #[test]
    fn ollama_pull_lines() {
        let t = transfer("pulling 2bada8a74506:  10% ▕█████   ▏  470 MB/4.7 GB  5.2 MB/s  13m12s");
        assert_eq!(t.percent, Some(10.0));
        assert_eq!(t.done_bytes, Some(470_000_000));
        assert_eq!(t.total_bytes, Some(4_700_000_000));
        assert_eq!(t.bytes_per_second, Some(5.2e6));
        assert_eq!(t.eta_seconds, Some(13 * 60 + 12));
        let t = transfer("pulling 2bada8a74506: 100% ▕████████▏ 4.7 GB/4.7 GB");
        assert_eq!((t.percent, t.eta_seconds), (Some(100.0), None));
        let t = transfer("\x1b[?25lpulling 8934d96d3f08... 100%");
        assert_eq!(t.percent, Some(100.0), "escape codes are stripped");
        assert!(parse_line("pulling manifest").is_none());
    }

    #[test]
    fn markers_fold_into_overall_progress_with_eta() {
        let mut p = Progress::default();
        p.feed(b"::leasehold::step 2/4 Miniconda\n", 0.0);
        p.feed(b"  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0\r 50 100M   50 50.0M", 1.0);
        assert_eq!(
            p.percent,
            Some(25.0),
            "step 2 of 4 started, no download yet"
        );
        p.feed(
            b"    0     0  10.0M      0  0:00:10  0:00:05  0:00:05 10.0M\r",
            5.0,
        );
        assert_eq!(p.percent, Some(37.5), "half of the second step");
        assert_eq!(p.eta_seconds, Some(5));
        p.feed(b"::leasehold::result python=/root/miniconda3/envs/dl/bin/python\n::leasehold::finding ollama.cpu_offload\n::leasehold::fail torch.cpu_build this is a CPU-only build\n", 6.0);
        assert_eq!(
            p.results.get("python").map(String::as_str),
            Some("/root/miniconda3/envs/dl/bin/python")
        );
        assert_eq!(p.findings, vec!["ollama.cpu_offload"]);
        assert_eq!(
            p.failure.as_ref().map(|f| f.0.as_str()),
            Some("torch.cpu_build")
        );
    }

    #[test]
    fn four_megabytes_of_carriage_return_progress_are_read_line_by_line_in_bounded_memory() {
        let mut p = Progress::default();
        p.feed(b"::leasehold::step 3/4 Ollama model\n", 0.0);
        let mut log = Vec::new();
        let mut n = 0u64;
        while log.len() < 4 * 1024 * 1024 {
            log.extend_from_slice(
                format!("pulling 2bada8a74506:  {}% \u{2595}\u{2588}\u{258f}  470 MB/4.7 GB  5.2 MB/s  13m12s\r", n % 100).as_bytes(),
            );
            n += 1;
        }
        log.extend_from_slice(b"pulling 2bada8a74506:  50% \xe2\x96\x95\xe2\x96\x88\xe2\x96\x8f  2.3 GB/4.7 GB  5.2 MB/s  7m0s\r");
        for (at, chunk) in log.chunks(4093).enumerate() {
            p.feed(chunk, at as f64);
            assert!(
                p.pending_bytes() < 4093 * 2,
                "only the unfinished bar is held"
            );
        }
        assert_eq!(p.transfer.as_ref().and_then(|t| t.percent), Some(50.0));
        assert_eq!(p.eta_seconds, Some(420));

        // A "line" that never ends keeps only its start.
        let mut p = Progress::default();
        for _ in 0..1024 {
            p.feed(&[b'x'; 4096], 0.0);
        }
        assert_eq!(p.pending_bytes(), MAX_PROGRESS_LINE);
    }

    #[test]
    fn a_log_full_of_markers_keeps_a_bounded_progress() {
        let mut p = Progress::default();
        for n in 0..10_000 {
            p.feed(
                format!("::leasehold::skip step {n}\n::leasehold::finding code.{n}\n::leasehold::result k{n}=v\n").as_bytes(),
                0.0,
            );
        }
        assert_eq!(p.skipped.len(), MAX_LISTED);
        assert_eq!(p.findings.len(), MAX_LISTED);
        assert_eq!(p.results.len(), MAX_LISTED);
    }

    #[test]
    fn a_rate_is_computed_when_the_tool_prints_none() {
        let mut p = Progress::default();
        p.line("Progress 1000000 of 5000000", 10.0);
        p.line("Progress 3000000 of 5000000", 12.0);
        let t = p.transfer.as_ref().expect("transfer");
        assert_eq!(t.bytes_per_second, Some(1e6));
        assert_eq!(p.eta_seconds, Some(2));
    }

    #[test]
    fn time_texts() {
        assert_eq!(seconds("0:00:03"), Some(3));
        assert_eq!(seconds("1:02:03"), Some(3723));
        assert_eq!(seconds("13m12s"), Some(792));
        assert_eq!(seconds("2h3m"), Some(7380));
        assert_eq!(seconds("--:--:--"), None);
        assert_eq!(seconds(""), None);
    }
}

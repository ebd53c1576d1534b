//! One pass over the pasted text: every known error's keywords are looked for at once
//! (Aho–Corasick, linear in the input), and only the lines around a keyword are read further.
//!
//! Nothing here trusts the input: a line is at most [`MAX_LINE`] bytes around the keyword (a
//! 50 MB line costs the same as a short one), each signal keeps a handful of lines, and the
//! regexes that confirm a generic keyword ("out of memory", "Killed", "Xid") run a bounded number
//! of times. The `regex` crate guarantees linear time, so no input can make a confirmation slow.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;

/// Bytes of a line looked at on each side of a keyword.
pub(super) const MAX_LINE: usize = 4096;
/// Characters of a line shown as evidence.
const MAX_EVIDENCE: usize = 600;
/// Lines kept per signal from the start of the text (the last one is kept as well).
const KEEP_FIRST: usize = 3;
/// Confirmations (regex runs) per signal before the rest of its keywords are only counted.
const CONFIRM_BUDGET: usize = 20_000;

/// What a line can be evidence of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Signal {
    CudaOom,
    HostOom,
    OllamaOom,
    OllamaOffload,
    ArchUnsupported,
    DriverTooOld,
    DriverMismatch,
    DriverNotLoaded,
    IllegalAccess,
    DeviceAssert,
    Xid,
    CrashDump,
    Nccl,
    DiskFull,
    HfUnreachable,
    PipNoTorch,
    CpuBuild,
    NoDevice,
}

struct Keyword {
    text: &'static str,
    signals: &'static [Signal],
}

use Signal as S;

/// Keywords, matched case-insensitively. A keyword that names its error precisely needs no
/// confirmation; the generic ones are confirmed by [`confirm`] for each signal they may mean.
const KEYWORDS: &[Keyword] = &[
    Keyword {
        text: "out of memory",
        signals: &[S::CudaOom, S::HostOom, S::OllamaOom],
    },
    Keyword {
        text: "OutOfMemoryError",
        signals: &[S::CudaOom],
    },
    // Some reports quote only the figures ("Tried to allocate 20.00 MiB (GPU 0; …").
    Keyword {
        text: "Tried to allocate",
        signals: &[S::CudaOom],
    },
    Keyword {
        text: "CUBLAS_STATUS_ALLOC_FAILED",
        signals: &[S::CudaOom],
    },
    Keyword {
        text: "Killed",
        signals: &[S::HostOom],
    },
    Keyword {
        text: "oom-kill",
        signals: &[S::HostOom],
    },
    Keyword {
        text: "oom_reaper",
        signals: &[S::HostOom],
    },
    Keyword {
        text: "exitcode",
        signals: &[S::HostOom],
    },
    Keyword {
        text: "exit code 137",
        signals: &[S::HostOom],
    },
    Keyword {
        text: "SIGKILL",
        signals: &[S::HostOom],
    },
    Keyword {
        text: "requires more system memory",
        signals: &[S::OllamaOom],
    },
    Keyword {
        text: "unable to allocate",
        signals: &[S::OllamaOom],
    },
    Keyword {
        text: "layers to GPU",
        signals: &[S::OllamaOffload],
    },
    Keyword {
        text: "no kernel image is available",
        signals: &[S::ArchUnsupported],
    },
    Keyword {
        text: "not compatible with the current PyTorch installation",
        signals: &[S::ArchUnsupported],
    },
    Keyword {
        text: "driver on your system is too old",
        signals: &[S::DriverTooOld],
    },
    Keyword {
        text: "driver version is insufficient",
        signals: &[S::DriverTooOld],
    },
    Keyword {
        text: "cudaErrorInsufficientDriver",
        signals: &[S::DriverTooOld],
    },
    Keyword {
        text: "Driver/library version mismatch",
        signals: &[S::DriverMismatch],
    },
    Keyword {
        text: "communicate with the NVIDIA driver",
        signals: &[S::DriverNotLoaded],
    },
    Keyword {
        text: "Found no NVIDIA driver",
        signals: &[S::DriverNotLoaded],
    },
    Keyword {
        text: "illegal memory access",
        signals: &[S::IllegalAccess],
    },
    Keyword {
        text: "cudaErrorIllegalAddress",
        signals: &[S::IllegalAccess],
    },
    Keyword {
        text: "unspecified launch failure",
        signals: &[S::IllegalAccess],
    },
    Keyword {
        text: "device-side assert",
        signals: &[S::DeviceAssert],
    },
    Keyword {
        text: "Xid",
        signals: &[S::Xid],
    },
    Keyword {
        text: "fallen off the bus",
        signals: &[S::Xid],
    },
    Keyword {
        text: "crash dump",
        signals: &[S::CrashDump],
    },
    Keyword {
        text: "NCCL error",
        signals: &[S::Nccl],
    },
    Keyword {
        text: "NCCL WARN",
        signals: &[S::Nccl],
    },
    Keyword {
        text: "ncclSystemError",
        signals: &[S::Nccl],
    },
    Keyword {
        text: "ncclUnhandledCudaError",
        signals: &[S::Nccl],
    },
    Keyword {
        text: "ncclInternalError",
        signals: &[S::Nccl],
    },
    Keyword {
        text: "ncclRemoteError",
        signals: &[S::Nccl],
    },
    Keyword {
        text: "Test NCCL failure",
        signals: &[S::Nccl],
    },
    Keyword {
        text: "collective operation timeout",
        signals: &[S::Nccl],
    },
    Keyword {
        text: "No space left on device",
        signals: &[S::DiskFull],
    },
    Keyword {
        text: "Errno 28",
        signals: &[S::DiskFull],
    },
    Keyword {
        text: "Disk quota exceeded",
        signals: &[S::DiskFull],
    },
    Keyword {
        text: "huggingface.co",
        signals: &[S::HfUnreachable],
    },
    Keyword {
        text: "LocalEntryNotFoundError",
        signals: &[S::HfUnreachable],
    },
    Keyword {
        text: "satisfies the requirement torch",
        signals: &[S::PipNoTorch],
    },
    Keyword {
        text: "No matching distribution found for torch",
        signals: &[S::PipNoTorch],
    },
    Keyword {
        text: "Torch not compiled with CUDA enabled",
        signals: &[S::CpuBuild],
    },
    Keyword {
        text: "no CUDA-capable device is detected",
        signals: &[S::NoDevice],
    },
];

/// Keywords that are not evidence of anything by themselves but say where a failure surfaced,
/// for `explain.unknown`.
const MARKERS: &[&str] = &[
    "Traceback (most recent call last)",
    "Error:",
    "Exception:",
    "FATAL",
    "panic:",
];

/// The regex that must match the line for a generic keyword to count as `signal`.
fn confirm(signal: Signal, keyword: &str) -> Option<&'static Regex> {
    static CUDA_OOM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED")
            .expect("valid regex")
    });
    static HOST_OOM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?ix)
              Out\ of\ memory:\ Kill
            | Memory\ cgroup\ out\ of\ memory
            | oom-kill: | oom_reaper: | invoked\ oom-killer
            | killed\ by\ signal:\ Killed
            | ^\s*Killed\s*$
            | ^\s*(?:\S+:\ )?(?:line\ \d+:\ +)?\d+\ +Killed\b
            | exitcode\s*:\s*-9\b
            | exit\ code\ 137 | signal\ 9:\ SIGKILL | \bSIGKILL\b.*\b(?:oom|memory)",
        )
        .expect("valid regex")
    });
    static OLLAMA_OOM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)requires more system memory|cudaMalloc failed|unable to allocate (?:CUDA\d*|CPU|backend) buffer|ggml_cuda|llama runner")
            .expect("valid regex")
    });
    static OFFLOAD: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"offloaded \d+/\d+ layers to GPU").expect("valid regex"));
    static XID: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"NVRM: Xid\b|fallen off the bus").expect("valid regex"));
    static HF: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)couldn't connect to 'https?://huggingface\.co|LocalEntryNotFoundError|huggingface\.co.*(?:timed out|Max retries exceeded|Network is unreachable|Connection (?:refused|reset|aborted)|Failed to establish|SSLError|ProxyError|ConnectTimeout|ReadTimeout|Temporary failure in name resolution)")
            .expect("valid regex")
    });
    // "DefaultCPUAllocator: … you tried to allocate" is the host's memory, not the GPU's.
    static TRIED_GPU: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)CUDA|\(GPU \d+;|GPU \d+ has a total").expect("valid regex")
    });
    match signal {
        S::CudaOom if keyword == "out of memory" => Some(&CUDA_OOM),
        S::CudaOom if keyword == "Tried to allocate" => Some(&TRIED_GPU),
        S::HostOom => Some(&HOST_OOM),
        S::OllamaOom if keyword != "requires more system memory" => Some(&OLLAMA_OOM),
        S::OllamaOffload => Some(&OFFLOAD),
        S::Xid => Some(&XID),
        S::HfUnreachable => Some(&HF),
        _ => None,
    }
}

static MATCHER: LazyLock<AhoCorasick> = LazyLock::new(|| {
    let patterns = KEYWORDS
        .iter()
        .map(|k| k.text)
        .chain(MARKERS.iter().copied());
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::LeftmostFirst)
        .build(patterns)
        .expect("keywords build an automaton")
});

/// A line of the input, as byte offsets (bounded to [`MAX_LINE`] around its keyword).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Default)]
struct SignalLines {
    /// Distinct lines that showed the signal.
    count: usize,
    first: Vec<Span>,
    last: Option<Span>,
    confirmations: usize,
}

/// Which signals the text showed, with a few of their lines.
#[derive(Debug)]
pub(super) struct Scan<'a> {
    pub text: &'a str,
    signals: BTreeMap<Signal, SignalLines>,
    /// The last line that looked like a failure (a traceback, `Error:`), for the unknown case.
    pub last_marker: Option<Span>,
}

impl<'a> Scan<'a> {
    pub fn has(&self, signal: Signal) -> bool {
        self.count(signal) > 0
    }

    /// How many distinct lines showed `signal`.
    pub fn count(&self, signal: Signal) -> usize {
        self.signals.get(&signal).map_or(0, |s| s.count)
    }

    /// The kept lines of `signal`: the first few and the last, in order.
    pub fn spans(&self, signal: Signal) -> Vec<Span> {
        let Some(lines) = self.signals.get(&signal) else {
            return Vec::new();
        };
        let mut spans = lines.first.clone();
        if let Some(last) = lines.last.filter(|l| !spans.contains(l)) {
            spans.push(last);
        }
        spans
    }

    /// The raw text of the kept lines of `signal`.
    pub fn lines(&self, signal: Signal) -> Vec<&'a str> {
        self.spans(signal)
            .into_iter()
            .map(|s| self.raw(s))
            .collect()
    }

    pub fn raw(&self, span: Span) -> &'a str {
        &self.text[span.start..span.end]
    }

    /// The line at `span` and up to `more` lines after it, joined with spaces (messages such as
    /// PyTorch's OOM are wrapped in some logs), bounded to a few lines' worth of bytes.
    pub fn with_following(&self, span: Span, more: usize) -> String {
        let mut joined = self.raw(span).to_owned();
        let mut at = span.end;
        for _ in 0..more {
            let Some(next) = next_line(self.text, at) else {
                break;
            };
            joined.push(' ');
            joined.push_str(self.raw(next));
            at = next.end;
        }
        joined
    }
}

/// The line starting after `after` (past its line break), bounded like every other line.
fn next_line(text: &str, after: usize) -> Option<Span> {
    let bytes = text.as_bytes();
    let mut start = after;
    // Skip one line break (\r\n, \n or \r).
    match bytes.get(start) {
        Some(b'\r') => {
            start += 1;
            if bytes.get(start) == Some(&b'\n') {
                start += 1;
            }
        }
        Some(b'\n') => start += 1,
        _ => return None,
    }
    if start >= bytes.len() {
        return None;
    }
    let limit = floor_boundary(text, (start + MAX_LINE).min(bytes.len()));
    let end = bytes[start..limit]
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map_or(limit, |p| start + p);
    Some(Span { start, end })
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The line around bytes `start..end`, cut to [`MAX_LINE`] bytes on each side.
fn line_around(text: &str, start: usize, end: usize) -> Span {
    let bytes = text.as_bytes();
    let lower = ceil_boundary(text, start.saturating_sub(MAX_LINE));
    let line_start = bytes[lower..start]
        .iter()
        .rposition(|&b| b == b'\n' || b == b'\r')
        .map_or(lower, |p| lower + p + 1);
    let upper = floor_boundary(text, (end + MAX_LINE).min(bytes.len()));
    let line_end = bytes[end..upper]
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map_or(upper, |p| end + p);
    Span {
        start: line_start,
        end: line_end,
    }
}

/// Read `text` once and note which signals it shows.
pub(super) fn scan(text: &str) -> Scan<'_> {
    let mut signals: BTreeMap<Signal, SignalLines> = BTreeMap::new();
    let mut last_marker_at: Option<(usize, usize)> = None;
    // Lines already read for a signal end here; later keywords on the same line are skipped.
    let mut read_until: BTreeMap<Signal, usize> = BTreeMap::new();
    for found in MATCHER.find_iter(text) {
        let index = found.pattern().as_usize();
        let Some(keyword) = KEYWORDS.get(index) else {
            last_marker_at = Some((found.start(), found.end()));
            continue;
        };
        let mut line: Option<Span> = None;
        for &signal in keyword.signals {
            if read_until
                .get(&signal)
                .is_some_and(|&end| found.start() < end)
            {
                continue;
            }
            let entry = signals.entry(signal).or_default();
            let regex = confirm(signal, keyword.text);
            if regex.is_some() && entry.confirmations >= CONFIRM_BUDGET {
                continue;
            }
            let span = *line.get_or_insert_with(|| line_around(text, found.start(), found.end()));
            // The whole line is read once per signal, whatever the verdict.
            read_until.insert(signal, span.end);
            if let Some(regex) = regex {
                entry.confirmations += 1;
                if !regex.is_match(&text[span.start..span.end]) {
                    continue;
                }
            }
            entry.count += 1;
            if entry.first.len() < KEEP_FIRST {
                entry.first.push(span);
            } else {
                entry.last = Some(span);
            }
        }
    }
    Scan {
        text,
        signals,
        last_marker: last_marker_at.map(|(s, e)| line_around(text, s, e)),
    }
}

/// A line as evidence: escape sequences and control characters removed, trimmed, and cut to a
/// readable length.
pub(super) fn clean(line: &str) -> String {
    static ANSI: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]").expect("valid regex"));
    let stripped = ANSI.replace_all(line, "");
    let mut out = String::with_capacity(stripped.len().min(MAX_EVIDENCE * 4));
    let mut chars = 0;
    for c in stripped.trim().chars() {
        if chars == MAX_EVIDENCE {
            out.push('…');
            break;
        }
        if c == '\t' {
            out.push(' ');
        } else if c.is_control() {
            continue;
        } else {
            out.push(c);
        }
        chars += 1;
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keyword_in_the_middle_of_a_huge_line_gives_a_bounded_line() {
        let text = format!(
            "{}No space left on device{}",
            "x".repeat(100_000),
            "y".repeat(100_000)
        );
        let scan = scan(&text);
        let lines = scan.lines(Signal::DiskFull);
        assert_eq!(lines.len(), 1, "one line shows the signal");
        assert!(
            lines[0].len() <= 2 * MAX_LINE + 30,
            "the line is cut around the keyword"
        );
    }

    #[test]
    fn a_generic_word_counts_only_when_its_line_says_so() {
        let scan = scan("the user killed the job\nKilled\n");
        assert_eq!(
            scan.count(Signal::HostOom),
            1,
            "only the bare `Killed` line is the OOM killer"
        );
        assert!(!scan.has(Signal::CudaOom));
    }

    #[test]
    fn an_allocation_on_the_host_is_not_a_cuda_oom() {
        let scan = scan("RuntimeError: [enforce fail at alloc_cpu.cpp:75] DefaultCPUAllocator: not enough memory: you tried to allocate 8589934592 bytes.");
        assert!(!scan.has(Signal::CudaOom));
        let scan = scan_of("Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; …)");
        assert!(scan.has(Signal::CudaOom));
    }

    fn scan_of(text: &str) -> Scan<'_> {
        scan(text)
    }

    #[test]
    fn many_lines_keep_the_first_few_and_the_last() {
        let text: String = (0..1000)
            .map(|i| format!("step {i}: No space left on device\n"))
            .collect();
        let scan = scan(&text);
        assert_eq!(scan.count(Signal::DiskFull), 1000);
        let lines = scan.lines(Signal::DiskFull);
        assert_eq!(lines.len(), KEEP_FIRST + 1);
        assert!(
            lines.last().is_some_and(|l| l.starts_with("step 999")),
            "the last line is kept"
        );
    }

    #[test]
    fn control_characters_and_colour_codes_leave_the_evidence() {
        assert_eq!(
            clean("\x1b[31mRuntimeError\x1b[0m: boom\x07\x00 "),
            "RuntimeError: boom"
        );
        let long = "é".repeat(5000);
        assert!(clean(&long).chars().count() <= MAX_EVIDENCE + 1);
    }

    #[test]
    fn wrapped_lines_are_joined() {
        let text = "CUDA out of memory. Tried to allocate 2.00 MiB\r\n(GPU 0; 6.00 GiB total capacity)\nnext";
        let scan = scan(text);
        let span = scan.spans(Signal::CudaOom)[0];
        assert_eq!(
            scan.with_following(span, 1),
            "CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 6.00 GiB total capacity)"
        );
    }
}

//! The one-line failures nvidia-smi (or the shell) prints instead of a report.

use std::sync::LazyLock;

use regex::Regex;

use super::{GpuInfo, GpuState, NvidiaSmiReport, NvidiaSmiStatus};

/// A recognised failure and what it implies for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub status: Option<NvidiaSmiStatus>,
    /// The line that carried the failure, verbatim (trimmed).
    pub message: String,
    pub nvml_library_version: Option<String>,
    /// Bus ids of GPUs whose handle could not be opened ("Unable to determine the device handle").
    pub unreachable_gpus: Vec<String>,
}

static NOT_LOADED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)couldn.?t communicate with the nvidia driver|nvidia driver is not loaded|failed to initialize nvml: (?:unknown error|gpu access blocked|insufficient permissions|driver not loaded)")
        .expect("static regex")
});
static MISMATCH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)driver/library version mismatch").expect("static regex"));
static NVML_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)NVML library version:\s*([0-9][0-9.]*)").expect("static regex")
});
static NO_DEVICES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)no devices were found").expect("static regex"));
static NOT_INSTALLED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)command not found|nvidia-smi(?:\.exe)?'? is not recognized|nvidia-smi: (?:not found|no such file or directory)|couldn.?t find libnvidia-ml\.so|nvml shared library not found")
        .expect("static regex")
});
static NO_HANDLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)unable to determine the device handle for (?:gpu\s*)?([0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f])")
        .expect("static regex")
});

fn line_matching<'a>(text: &'a str, pattern: &Regex) -> Option<&'a str> {
    text.lines()
        .find(|line| pattern.is_match(line))
        .map(str::trim)
}

/// Recognise the failure texts; `None` when the text carries none of them.
pub fn classify_failure(text: &str) -> Option<Failure> {
    let status_rules: [(&Regex, NvidiaSmiStatus); 4] = [
        (&MISMATCH, NvidiaSmiStatus::DriverMismatch),
        (&NOT_LOADED, NvidiaSmiStatus::DriverNotLoaded),
        (&NO_DEVICES, NvidiaSmiStatus::NoDevices),
        (&NOT_INSTALLED, NvidiaSmiStatus::NotInstalled),
    ];
    for (pattern, status) in status_rules {
        if let Some(line) = line_matching(text, pattern) {
            return Some(Failure {
                status: Some(status),
                message: line.to_owned(),
                nvml_library_version: NVML_VERSION
                    .captures(text)
                    .and_then(|c| c.get(1))
                    .map(|m| m.as_str().trim_end_matches('.').to_owned()),
                unreachable_gpus: Vec::new(),
            });
        }
    }
    let unreachable: Vec<String> = NO_HANDLE
        .captures_iter(text)
        .filter_map(|c| c.get(1).map(|m| m.as_str().to_owned()))
        .collect();
    let message = line_matching(text, &NO_HANDLE)?.to_owned();
    Some(Failure {
        status: None,
        message,
        nvml_library_version: None,
        unreachable_gpus: unreachable,
    })
}

impl Failure {
    /// Fold the failure into whatever report the rest of the text produced.
    pub fn apply(self, report: &mut NvidiaSmiReport) {
        if let Some(status) = self.status {
            // GPUs parsed from the same text win: the failure belonged to another invocation.
            if report.gpus.is_empty() {
                report.status = status;
            }
        }
        for bus_id in self.unreachable_gpus {
            let index = report
                .gpus
                .iter()
                .map(|g| g.index.saturating_add(1))
                .max()
                .unwrap_or(0);
            report.gpus.push(GpuInfo {
                index,
                bus_id: Some(bus_id),
                state: GpuState::Error,
                failed_fields: vec!["device_handle".to_owned()],
                ..GpuInfo::default()
            });
            if report.status == NvidiaSmiStatus::Unrecognized {
                report.status = NvidiaSmiStatus::Ok;
            }
        }
        report.message = Some(self.message);
        if self.nvml_library_version.is_some() {
            report.nvml_library_version = self.nvml_library_version;
        }
    }
}

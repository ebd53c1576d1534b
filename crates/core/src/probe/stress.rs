//! The optional stress test: timed 8192² fp16/bf16 matmuls per GPU through the user's torch.
//!
//! It answers "is this GPU as fast as it should be, and does it stay so": the median TFLOPS goes
//! against the catalog's peak (in `diagnose`), the first and last batches show throttling, the
//! spread shows instability, and any CUDA error ends up in the facts as it was printed.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sections::{Part, PartOutput};
use super::torch::python_heredoc;

const SCRIPT: &str = include_str!("scripts/stress.py");
const MARK: &str = "@@leasehold:stress ";

/// Matrix side and seconds of timed work per GPU and dtype.
pub const SIZE: u32 = 8192;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub struct StressFacts {
    pub size: Option<u32>,
    pub error: Option<String>,
    #[serde(default)]
    pub devices: Vec<StressDevice>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct StressDevice {
    pub index: u32,
    pub name: String,
    pub runs: Vec<StressRun>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct StressRun {
    /// `float16` or `bfloat16`.
    pub dtype: String,
    /// TFLOPS of each timed batch, in order.
    pub tflops: Vec<f64>,
    pub error: Option<String>,
}

impl StressRun {
    pub fn median(&self) -> Option<f64> {
        let mut sorted: Vec<f64> = self
            .tflops
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        Some(if sorted.len().is_multiple_of(2) {
            (sorted[mid - 1] + sorted[mid]) / 2.0
        } else {
            sorted[mid]
        })
    }

    /// How much slower the last third of batches ran than the first third (0.15 = 15 % slower).
    pub fn slowdown(&self) -> Option<f64> {
        let n = self.tflops.len();
        if n < 6 {
            return None;
        }
        let third = n / 3;
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let first = mean(&self.tflops[..third]);
        let last = mean(&self.tflops[n - third..]);
        (first > 0.0).then(|| (first - last) / first)
    }

    /// Spread of the batches around the median ((max − min) / median).
    pub fn spread(&self) -> Option<f64> {
        let median = self.median()?;
        let max = self.tflops.iter().copied().fold(f64::MIN, f64::max);
        let min = self.tflops.iter().copied().fold(f64::MAX, f64::min);
        (median > 0.0).then(|| (max - min) / median)
    }
}

pub(crate) fn part(seconds: f64) -> Part {
    let script = python_heredoc(
        SCRIPT,
        "{\"error\": \"no python interpreter on PATH\"}",
        MARK,
    );
    // The heredoc feeds the script on stdin; its arguments follow `-`.
    let args = format!("- {SIZE} {seconds:.1}");
    Part::new(
        "stress",
        script.replacen("\"$PY\" -", &format!("\"$PY\" {args}"), 1),
    )
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StressParseError {
    #[error("the stress test printed no result line")]
    NoResult,
    #[error("the stress test's result is not valid JSON: {0}")]
    BadJson(String),
}

pub(crate) fn parse(part: Option<&PartOutput>) -> Result<StressFacts, StressParseError> {
    parse_output(part.map_or("", |p| p.text.as_str()))
}

pub fn parse_output(text: &str) -> Result<StressFacts, StressParseError> {
    let line = text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix(MARK.trim_end()))
        .ok_or(StressParseError::NoResult)?;
    serde_json::from_str(line.trim()).map_err(|err| StressParseError::BadJson(err.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_give_median_slowdown_and_spread() {
        let text = "@@leasehold:stress {\"size\": 8192, \"devices\": [{\"index\": 0, \"name\": \"NVIDIA GeForce RTX 4090\", \"runs\": [{\"dtype\": \"float16\", \"tflops\": [160, 158, 159, 130, 120, 118], \"error\": null}]}]}";
        let facts = parse_output(text).expect("parses");
        let run = &facts.devices[0].runs[0];
        assert_eq!(run.median(), Some(144.0));
        let slowdown = run.slowdown().expect("enough batches");
        assert!(
            (slowdown - (159.0 - 119.0) / 159.0).abs() < 1e-9,
            "first third vs last third"
        );
        assert!(run.spread().is_some_and(|s| s > 0.2));
    }

    #[test]
    fn errors_are_kept_verbatim() {
        let text = "@@leasehold:stress {\"size\": 8192, \"devices\": [{\"index\": 0, \"name\": \"A100\", \"runs\": [{\"dtype\": \"float16\", \"tflops\": [], \"error\": \"RuntimeError: CUDA error: an illegal memory access was encountered\"}]}]}";
        let facts = parse_output(text).expect("parses");
        assert_eq!(facts.devices[0].runs[0].median(), None);
        assert!(facts.devices[0].runs[0]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("illegal memory access")));
        assert_eq!(parse_output("killed"), Err(StressParseError::NoResult));
    }
}

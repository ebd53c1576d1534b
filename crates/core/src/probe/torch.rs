//! PyTorch as the user's Python sees it: version, CUDA build, `cuda.is_available()`, devices,
//! arch list, and a tiny real kernel launch — the one check that catches "no kernel image is
//! available for execution on the device", which `is_available()` happily hides.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sections::{Part, PartOutput};

const SCRIPT: &str = include_str!("scripts/torch_probe.py");
const MARK: &str = "@@leasehold:torch ";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub struct TorchFacts {
    /// The interpreter that ran the probe.
    pub python: Option<String>,
    pub python_version: Option<String>,
    /// No Python interpreter on PATH at all.
    #[serde(default)]
    pub python_missing: bool,
    /// `ModuleNotFoundError: No module named 'torch'` and the like.
    pub import_error: Option<String>,
    /// `2.5.1+cu124`.
    pub version: Option<String>,
    /// `torch.version.cuda`: `12.4`, or `None` for a CPU-only build.
    pub cuda_build: Option<String>,
    pub available: Option<bool>,
    pub device_count: Option<u32>,
    #[serde(default)]
    pub devices: Vec<TorchDevice>,
    /// `torch.cuda.get_arch_list()`: `sm_50 … sm_90`, `compute_90` for PTX.
    #[serde(default)]
    pub arch_list: Vec<String>,
    pub kernel: Option<KernelCheck>,
    pub cuda_error: Option<String>,
    /// Warnings raised while initialising CUDA ("… is not compatible with the current PyTorch
    /// installation", "The NVIDIA driver on your system is too old").
    #[serde(default)]
    pub warnings: Vec<String>,
}

impl TorchFacts {
    pub fn installed(&self) -> bool {
        self.version.is_some()
    }

    /// A build without CUDA: `torch.version.cuda` is None (wheels say `+cpu`).
    pub fn is_cpu_build(&self) -> bool {
        self.installed() && self.cuda_build.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TorchDevice {
    pub name: String,
    /// `8.9`, `12.0`.
    pub capability: String,
    pub total_memory_mib: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct KernelCheck {
    pub ok: bool,
    pub error: Option<String>,
}

pub(crate) fn part() -> Part {
    Part::new(
        "torch",
        python_heredoc(SCRIPT, "{\"python_missing\": true}", MARK),
    )
}

/// Run `script` with python3 (python as a fallback), or print `missing_json` after `mark`.
pub(crate) fn python_heredoc(script: &str, missing_json: &str, mark: &str) -> String {
    format!(
        "PY=$(command -v python3 || command -v python)\nif [ -z \"$PY\" ]; then echo '{mark}{missing_json}'; else \"$PY\" - <<'LEASEHOLD_PY_EOF'\n{script}\nLEASEHOLD_PY_EOF\nfi"
    )
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TorchParseError {
    #[error("the torch probe printed no result line")]
    NoResult,
    #[error("the torch probe's result is not valid JSON: {0}")]
    BadJson(String),
}

pub(crate) fn parse(part: Option<&PartOutput>) -> Result<TorchFacts, TorchParseError> {
    parse_output(part.map_or("", |p| p.text.as_str()))
}

/// Find the marked JSON line among whatever else Python printed.
pub fn parse_output(text: &str) -> Result<TorchFacts, TorchParseError> {
    let line = text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix(MARK.trim_end()))
        .ok_or(TorchParseError::NoResult)?;
    serde_json::from_str(line.trim()).map_err(|err| TorchParseError::BadJson(err.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtx5090_with_a_cu124_wheel_reports_the_failed_launch() {
        let text = "some conda banner\n@@leasehold:torch {\"python\": \"/root/miniconda3/bin/python3\", \"python_version\": \"3.10.14\", \"version\": \"2.5.1+cu124\", \"cuda_build\": \"12.4\", \"available\": true, \"device_count\": 1, \"devices\": [{\"name\": \"NVIDIA GeForce RTX 5090\", \"capability\": \"12.0\", \"total_memory_mib\": 32111}], \"arch_list\": [\"sm_50\", \"sm_60\", \"sm_70\", \"sm_75\", \"sm_80\", \"sm_86\", \"sm_90\"], \"kernel\": {\"ok\": false, \"error\": \"RuntimeError: CUDA error: no kernel image is available for execution on the device\"}, \"warnings\": [\"NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\"]}";
        let facts = parse_output(text).expect("parses");
        assert_eq!(facts.version.as_deref(), Some("2.5.1+cu124"));
        assert_eq!(facts.devices[0].capability, "12.0");
        assert_eq!(facts.kernel.as_ref().map(|k| k.ok), Some(false));
        assert!(!facts.is_cpu_build());
        assert_eq!(facts.warnings.len(), 1);
    }

    #[test]
    fn cpu_build_and_missing_torch_are_distinguished() {
        let cpu = parse_output("@@leasehold:torch {\"version\": \"2.3.0+cpu\", \"cuda_build\": null, \"available\": false, \"device_count\": 0, \"devices\": [], \"warnings\": []}").expect("parses");
        assert!(cpu.is_cpu_build());
        let missing = parse_output("@@leasehold:torch {\"python\": \"/usr/bin/python3\", \"import_error\": \"ModuleNotFoundError: No module named 'torch'\"}").expect("parses");
        assert!(!missing.installed());
        assert!(missing.import_error.is_some());
        let no_python =
            parse_output("@@leasehold:torch {\"python_missing\": true}").expect("parses");
        assert!(no_python.python_missing);
    }

    #[test]
    fn garbage_is_a_typed_error() {
        assert_eq!(
            parse_output("Traceback (most recent call last):"),
            Err(TorchParseError::NoResult)
        );
        assert!(matches!(
            parse_output("@@leasehold:torch {oops"),
            Err(TorchParseError::BadJson(_))
        ));
    }
}

//! Each recipe's options: name, default, help, and what a valid value looks like. A value is
//! refused here only when it cannot mean anything (a control character, a choice not offered, a
//! number out of range); everything else is accepted and reaches the script quoted.

use super::{InstallError, Recipe};

/// What a value must look like.
#[derive(Debug, Clone, Copy)]
pub enum ValueKind {
    /// One of these words.
    Choice(&'static [&'static str]),
    /// Free text (paths, model names, package lists): anything without control characters.
    Text,
    /// Free text that must not be empty.
    NonEmpty,
    /// A conda/venv environment name: letters, digits, `.`, `_`, `-`.
    EnvName,
    /// `3.10`-style Python version.
    PythonVersion,
    /// `http://` or `https://` URL (empty allowed: the default applies).
    Url,
    /// An integer in this range.
    Number(u64, u64),
    /// GPU indexes separated by commas (`0,2`), or `all`.
    GpuList,
}

#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    pub name: &'static str,
    /// Empty: no default (the recipe derives one, e.g. from facts).
    pub default: &'static str,
    pub help: &'static str,
    pub kind: ValueKind,
}

const fn opt(
    name: &'static str,
    default: &'static str,
    kind: ValueKind,
    help: &'static str,
) -> OptionSpec {
    OptionSpec {
        name,
        default,
        help,
        kind,
    }
}

impl OptionSpec {
    pub(crate) fn check(&self, value: &str) -> Result<(), InstallError> {
        let bad = |why: String| InstallError::BadValue {
            option: self.name.to_owned(),
            value: value.to_owned(),
            why,
        };
        if value.chars().any(char::is_control) {
            return Err(bad(
                "control characters (newlines, tabs) are not allowed".into()
            ));
        }
        match self.kind {
            ValueKind::Choice(list) if !list.contains(&value) => {
                Err(bad(format!("choose one of {}", list.join(", "))))
            }
            ValueKind::NonEmpty if value.trim().is_empty() => Err(bad("must not be empty".into())),
            ValueKind::EnvName
                if value.is_empty()
                    || value.starts_with('-')
                    || !value
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) =>
            {
                Err(bad("letters, digits, '.', '_' and '-' only".into()))
            }
            ValueKind::PythonVersion
                if !regex::Regex::new(r"^3\.\d{1,2}$")
                    .map(|re| re.is_match(value))
                    .unwrap_or(false) =>
            {
                Err(bad("a Python version like 3.10 or 3.11".into()))
            }
            ValueKind::Url
                if !(value.is_empty()
                    || value.starts_with("https://")
                    || value.starts_with("http://")) =>
            {
                Err(bad("an http:// or https:// URL".into()))
            }
            ValueKind::GpuList
                if value != "all"
                    && !value.split(',').all(|g| {
                        !g.is_empty() && g.len() <= 3 && g.chars().all(|c| c.is_ascii_digit())
                    }) =>
            {
                Err(bad("GPU indexes separated by commas (0,1,2) or all".into()))
            }
            ValueKind::Number(min, max) => match value.parse::<u64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(()),
                _ => Err(bad(format!("a whole number from {min} to {max}"))),
            },
            _ => Ok(()),
        }
    }
}

pub(crate) const PIP_MIRRORS: &[&str] = &["official", "tsinghua", "ustc", "aliyun", "keep"];
pub(crate) const CONDA_MIRRORS: &[&str] = &["official", "tsinghua", "ustc", "aliyun", "keep"];
pub(crate) const HF_MIRRORS: &[&str] = &["official", "hf-mirror", "keep"];
const TURBO: &[&str] = &["auto", "off"];
const YES_NO_AUTO: &[&str] = &["auto", "yes", "no"];

const MIRRORS: &[OptionSpec] = &[
    opt("pip", "", ValueKind::Choice(PIP_MIRRORS), "pip index: official, tsinghua, ustc, aliyun or keep (default: the fastest Verify measured, else official)"),
    opt("conda", "", ValueKind::Choice(CONDA_MIRRORS), "conda channels mirror (default: same as pip)"),
    opt("hf", "", ValueKind::Choice(HF_MIRRORS), "Hugging Face endpoint: official or hf-mirror (default: the faster one Verify measured, else official)"),
];

const MINICONDA: &[OptionSpec] = &[
    opt(
        "env",
        "dl",
        ValueKind::EnvName,
        "conda environment to create",
    ),
    opt(
        "python",
        "3.10",
        ValueKind::PythonVersion,
        "Python version of the environment",
    ),
    opt(
        "prefix",
        "",
        ValueKind::Text,
        "install folder (default ~/miniconda3)",
    ),
    opt(
        "mirror",
        "official",
        ValueKind::Choice(&["official", "tsinghua"]),
        "where the installer is downloaded from",
    ),
    opt(
        "url",
        "",
        ValueKind::Url,
        "installer URL, overriding mirror",
    ),
];

const PYTORCH: &[OptionSpec] = &[
    opt(
        "env",
        "dl",
        ValueKind::EnvName,
        "conda environment (a venv in ~/.venvs when there is no conda)",
    ),
    opt(
        "python",
        "3.10",
        ValueKind::PythonVersion,
        "Python version when the environment is created",
    ),
    opt(
        "driver",
        "",
        ValueKind::Text,
        "NVIDIA driver version (read from the instance when connected)",
    ),
    opt(
        "gpu",
        "",
        ValueKind::Text,
        "GPU name as nvidia-smi prints it (read from the instance when connected)",
    ),
    opt(
        "packages",
        "torch torchvision torchaudio",
        ValueKind::NonEmpty,
        "packages installed from the wheel index",
    ),
    opt(
        "index",
        "",
        ValueKind::Url,
        "wheel index URL, overriding the chosen one",
    ),
];

const PIP: &[OptionSpec] = &[
    opt(
        "env",
        "dl",
        ValueKind::EnvName,
        "conda environment (a venv in ~/.venvs when there is no conda)",
    ),
    opt(
        "python",
        "3.10",
        ValueKind::PythonVersion,
        "Python version when the environment is created",
    ),
    opt(
        "packages",
        "",
        ValueKind::NonEmpty,
        "packages, separated by spaces (e.g. \"transformers peft\")",
    ),
    opt(
        "index",
        "",
        ValueKind::Url,
        "index URL (default: pip's own configuration, e.g. the mirror)",
    ),
];

const OLLAMA: &[OptionSpec] = &[
    opt(
        "model",
        "qwen2.5:7b",
        ValueKind::NonEmpty,
        "model to pull and try",
    ),
    opt(
        "models_dir",
        "",
        ValueKind::Text,
        "where models are stored (default: the data disk when there is one, else ~/.ollama/models)",
    ),
    opt(
        "host",
        "127.0.0.1:11434",
        ValueKind::NonEmpty,
        "OLLAMA_HOST the server listens on",
    ),
    opt(
        "num_parallel",
        "1",
        ValueKind::Number(1, 64),
        "OLLAMA_NUM_PARALLEL: requests served at once per model",
    ),
    opt(
        "context_length",
        "4096",
        ValueKind::Number(256, 1_048_576),
        "OLLAMA_CONTEXT_LENGTH: context window (more costs VRAM)",
    ),
    opt(
        "install_url",
        "https://ollama.com/install.sh",
        ValueKind::Url,
        "the install script",
    ),
    opt(
        "turbo",
        "auto",
        ValueKind::Choice(TURBO),
        "use AutoDL's /etc/network_turbo for the download when present",
    ),
];

const DOCKER: &[OptionSpec] = &[
    opt(
        "container",
        "auto",
        ValueKind::Choice(YES_NO_AUTO),
        "whether the instance is a container (auto: Verify's answer, and the script checks again)",
    ),
    opt(
        "mirror",
        "official",
        ValueKind::Choice(&["official", "aliyun"]),
        "where get.docker.com fetches Docker from",
    ),
    opt(
        "test_image",
        "nvidia/cuda:12.4.1-base-ubuntu22.04",
        ValueKind::NonEmpty,
        "image used to check that containers see the GPU",
    ),
];

const VLLM: &[OptionSpec] = &[
    opt(
        "env",
        "vllm",
        ValueKind::EnvName,
        "its own environment, so the PyTorch wheel of your main one stays",
    ),
    opt(
        "python",
        "3.11",
        ValueKind::PythonVersion,
        "Python version of that environment",
    ),
    opt(
        "model",
        "Qwen/Qwen2.5-1.5B-Instruct",
        ValueKind::NonEmpty,
        "model to serve (Hugging Face id or a local path)",
    ),
    opt(
        "port",
        "8000",
        ValueKind::Number(1, 65535),
        "port of the OpenAI-compatible server",
    ),
    opt(
        "tensor_parallel",
        "1",
        ValueKind::Number(1, 64),
        "GPUs the model is split over",
    ),
    opt(
        "gpu_memory_utilization",
        "0.90",
        ValueKind::Text,
        "fraction of VRAM vLLM may take",
    ),
    opt(
        "hf",
        "",
        ValueKind::Choice(HF_MIRRORS),
        "Hugging Face endpoint for the download (default: as Verify measured)",
    ),
    opt(
        "turbo",
        "auto",
        ValueKind::Choice(TURBO),
        "use AutoDL's /etc/network_turbo for the download when present",
    ),
];

const TGI: &[OptionSpec] = &[
    opt(
        "container",
        "auto",
        ValueKind::Choice(YES_NO_AUTO),
        "whether the instance is a container (TGI runs in Docker)",
    ),
    opt(
        "model",
        "Qwen/Qwen2.5-1.5B-Instruct",
        ValueKind::NonEmpty,
        "model id to serve",
    ),
    opt(
        "port",
        "8080",
        ValueKind::Number(1, 65535),
        "port of the server on the instance",
    ),
    opt(
        "image",
        "ghcr.io/huggingface/text-generation-inference:latest",
        ValueKind::NonEmpty,
        "TGI image",
    ),
    opt(
        "data_dir",
        "",
        ValueKind::Text,
        "where weights are cached (default: the data disk, else ~/tgi-data)",
    ),
];

const PER_GPU: &[OptionSpec] = &[
    opt(
        "command",
        "",
        ValueKind::NonEmpty,
        "the command each GPU runs; {gpu} is replaced by its index",
    ),
    opt(
        "gpus",
        "all",
        ValueKind::GpuList,
        "GPU indexes, e.g. 0,1,2, or all",
    ),
];

pub(crate) fn specs(recipe: Recipe) -> &'static [OptionSpec] {
    match recipe {
        Recipe::Mirrors => MIRRORS,
        Recipe::Miniconda => MINICONDA,
        Recipe::Pytorch => PYTORCH,
        Recipe::Pip => PIP,
        Recipe::Ollama => OLLAMA,
        Recipe::Docker => DOCKER,
        Recipe::Vllm => VLLM,
        Recipe::Tgi => TGI,
        Recipe::PerGpu => PER_GPU,
    }
}

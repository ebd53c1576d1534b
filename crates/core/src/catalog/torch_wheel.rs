//! Which PyTorch CUDA wheel to install on a rented machine (`data/torch_wheels.toml`).
//!
//! A wheel works when three things agree: the driver runs the wheel's CUDA family (minor-version
//! compatibility minimums), the wheel carries kernels for the GPU's architecture (its
//! TORCH_CUDA_ARCH_LIST), and a PyTorch release publishes that wheel. Among the wheels that work
//! we pick the one a current PyTorch release ships, preferring a stable build, then one the
//! driver supports fully (no reliance on minor-version compatibility), then the newest CUDA.
//!
//! When the GPU is unknown and no compute capability is given, the choice rests on the driver
//! alone and the reason says the architecture was not checked.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::cuda::{family_min_driver, full_support_driver, max_cuda_for_driver};
use super::gpus::{find_gpu, GpuSpec};
use super::version::{parse_compute_capability, DriverVersion, MajorMinor};
use super::CatalogError;

const INDEX_BASE: &str = "https://download.pytorch.org/whl/";

#[derive(Debug, Clone, Deserialize)]
pub struct Wheel {
    pub tag: String,
    pub cuda: MajorMinor,
    #[serde(default)]
    pub arch_list: Option<Vec<String>>,
    #[serde(default)]
    pub arch_source: Option<String>,
    #[serde(default)]
    pub arch_note: Option<String>,
}

impl Wheel {
    /// Whether this wheel has kernels the GPU can run: an architecture of the same major version
    /// and a minor version no higher than the GPU's. `None` when the wheel's list is unknown.
    pub fn supports(&self, cc: MajorMinor) -> Option<bool> {
        let list = self.arch_list.as_ref()?;
        Some(
            list.iter()
                .filter_map(|arch| MajorMinor::parse(arch))
                .any(|arch| arch.major == cc.major && arch.minor <= cc.minor),
        )
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Release {
    pub torch: String,
    pub stable: Vec<String>,
    pub experimental: Vec<String>,
    pub source: String,
    #[serde(default)]
    pub note: Option<String>,
}

impl Release {
    fn version(&self) -> MajorMinor {
        MajorMinor::parse(&self.torch).unwrap_or(MajorMinor::new(0, 0))
    }

    fn ships(&self, tag: &str) -> bool {
        self.stable
            .iter()
            .chain(&self.experimental)
            .any(|t| t == tag)
    }
}

#[derive(Deserialize)]
struct WheelFile {
    wheel: Vec<Wheel>,
    release: Vec<Release>,
}

static MATRIX: LazyLock<WheelFile> = LazyLock::new(|| {
    toml::from_str(include_str!("data/torch_wheels.toml"))
        .expect("embedded torch_wheels.toml is valid; see catalog tests")
});

pub fn wheels() -> &'static [Wheel] {
    &MATRIX.wheel
}

pub fn releases() -> &'static [Release] {
    &MATRIX.release
}

/// What `leasehold torch-wheel` needs to decide.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TorchWheelRequest {
    /// Driver version as nvidia-smi prints it.
    pub driver: String,
    /// GPU name as nvidia-smi prints it.
    #[serde(default)]
    #[ts(optional)]
    pub gpu: Option<String>,
    /// Compute capability ("12.0"); overrides the catalog's value.
    #[serde(default)]
    #[ts(optional)]
    pub compute_cap: Option<String>,
}

/// The chosen wheel, or `cuda_tag: None` with the reason nothing fits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TorchWheelChoice {
    pub cuda_tag: Option<String>,
    /// `https://download.pytorch.org/whl/cu128`; empty when nothing fits.
    pub index_url: String,
    /// The PyTorch releases that publish this wheel, e.g. "2.7–2.11"; empty when nothing fits.
    pub torch_versions: String,
    pub reason: String,
    /// The pip command to run, when a wheel was chosen.
    pub pip_command: Option<String>,
    /// Whether the GPU architecture was checked against the wheel.
    pub arch_checked: bool,
}

impl TorchWheelChoice {
    fn none(reason: String, arch_checked: bool) -> Self {
        Self {
            cuda_tag: None,
            index_url: String::new(),
            torch_versions: String::new(),
            reason,
            pip_command: None,
            arch_checked,
        }
    }
}

/// The architecture the choice is checked against, and where it came from.
struct Target {
    cc: Option<MajorMinor>,
    gpu: Option<&'static GpuSpec>,
    label: String,
}

fn resolve_target(request: &TorchWheelRequest) -> Result<Target, CatalogError> {
    let gpu = request.gpu.as_deref().and_then(find_gpu);
    let given = request
        .compute_cap
        .as_deref()
        .map(parse_compute_capability)
        .transpose()?;
    let cc = given.or_else(|| gpu.and_then(GpuSpec::compute_capability));
    let label = match (gpu, &request.gpu) {
        (Some(spec), _) => spec.name.clone(),
        (None, Some(name)) => name.clone(),
        (None, None) => "this GPU".to_owned(),
    };
    Ok(Target { cc, gpu, label })
}

/// Pick the PyTorch wheel for a driver and GPU.
pub fn choose_torch_wheel(request: &TorchWheelRequest) -> Result<TorchWheelChoice, CatalogError> {
    let driver: DriverVersion = request.driver.parse()?;
    let target = resolve_target(request)?;

    if let Some(min) = target.gpu.and_then(GpuSpec::min_driver) {
        if driver < min {
            return Ok(TorchWheelChoice::none(
                format!(
                    "Driver {driver} is older than the first driver that supports the {} (branch {}), \
                     so no PyTorch wheel can use this GPU. Upgrade the driver, or on a rented machine \
                     re-create the instance from an image with a driver ≥ {} (safer than reinstalling \
                     drivers by hand).",
                    target.label,
                    min.branch(),
                    min.branch()
                ),
                target.cc.is_some(),
            ));
        }
    }

    let full_cuda = max_cuda_for_driver(&driver);
    let mut best: Option<(Ranking, &Wheel, Vec<&Release>)> = None;
    for wheel in wheels() {
        let family_ok = family_min_driver(wheel.cuda.major).is_some_and(|min| driver >= *min);
        if !family_ok {
            continue;
        }
        let arch_ok = match target.cc {
            Some(cc) => wheel.supports(cc) == Some(true),
            None => true,
        };
        if !arch_ok {
            continue;
        }
        let shipping: Vec<&Release> = releases().iter().filter(|r| r.ships(&wheel.tag)).collect();
        let Some(newest) = shipping.iter().max_by_key(|r| r.version()) else {
            continue;
        };
        let ranking = Ranking {
            newest_release: newest.version(),
            stable_there: newest.stable.contains(&wheel.tag),
            fully_supported: full_cuda.is_some_and(|max| wheel.cuda <= max),
            cuda: wheel.cuda,
        };
        if best
            .as_ref()
            .is_none_or(|(current, _, _)| ranking > *current)
        {
            best = Some((ranking, wheel, shipping));
        }
    }

    let Some((ranking, wheel, shipping)) = best else {
        return Ok(TorchWheelChoice::none(
            no_wheel_reason(&driver, &target),
            target.cc.is_some(),
        ));
    };

    let versions = release_range(&shipping);
    let index_url = format!("{INDEX_BASE}{}", wheel.tag);
    let mut reason = format!("Driver {driver} runs CUDA {}.x builds", wheel.cuda.major);
    match target.cc {
        Some(cc) => reason.push_str(&format!(
            " and the {} wheel carries kernels for the {} (sm_{}{}).",
            wheel.tag, target.label, cc.major, cc.minor
        )),
        None => reason.push_str(&format!(
            ". The GPU architecture was not checked: the compute capability of {} is unknown \
             (not in the catalog and no --compute-cap given, e.g. --compute-cap 8.9).",
            target.label
        )),
    }
    if !ranking.fully_supported {
        let upgrade = full_support_driver(wheel.cuda)
            .map(|d| format!(" A driver ≥ {d} supports CUDA {} fully.", wheel.cuda))
            .unwrap_or_default();
        reason.push_str(&format!(
            " It relies on CUDA minor-version compatibility (this driver fully supports CUDA {}), \
             which works for PyTorch's prebuilt kernels but not for code that JIT-compiles PTX.{upgrade}",
            full_cuda.map_or_else(|| "11.x only".to_owned(), |cuda| cuda.to_string())
        ));
    }
    if !ranking.stable_there {
        reason.push_str(&format!(
            " PyTorch {} publishes it as an experimental build.",
            ranking.newest_release
        ));
    }
    if target.gpu.is_some_and(GpuSpec::is_blackwell) || target.cc.is_some_and(|cc| cc.major >= 10) {
        reason.push_str(" Blackwell GPUs need PyTorch 2.7 or newer with a cu128 or later wheel.");
    }
    Ok(TorchWheelChoice {
        cuda_tag: Some(wheel.tag.clone()),
        pip_command: Some(format!(
            "pip install torch torchvision torchaudio --index-url {index_url}"
        )),
        index_url,
        torch_versions: versions,
        reason,
        arch_checked: target.cc.is_some(),
    })
}

/// Lexicographic preference among working wheels (field order matters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Ranking {
    newest_release: MajorMinor,
    stable_there: bool,
    fully_supported: bool,
    cuda: MajorMinor,
}

fn no_wheel_reason(driver: &DriverVersion, target: &Target) -> String {
    let wanted = target.cc.and_then(|cc| {
        wheels()
            .iter()
            .filter(|wheel| wheel.supports(cc) == Some(true))
            .filter_map(|wheel| family_min_driver(wheel.cuda.major).map(|min| (min, wheel)))
            .min_by(|a, b| a.0.cmp(b.0))
    });
    match wanted {
        Some((min, wheel)) => format!(
            "No PyTorch wheel fits: the {} needs the {} wheel or newer, which needs a driver ≥ {min}, \
             and this driver is {driver}. Upgrade the driver, or on a rented machine re-create the \
             instance from an image with a newer driver.",
            target.label, wheel.tag
        ),
        None if target.cc.is_some() => format!(
            "No PyTorch wheel in the table carries kernels for the {} with driver {driver}. Upgrade \
             the driver, or re-create the instance from an image with a newer driver.",
            target.label
        ),
        None => format!(
            "Driver {driver} is older than every CUDA family PyTorch ships (CUDA 11.x needs \
             ≥ 450.80.02). Upgrade the driver, or re-create the instance from an image with a newer \
             driver."
        ),
    }
}

/// "2.7–2.11" for the releases shipping a wheel (they are contiguous in the matrix).
fn release_range(shipping: &[&Release]) -> String {
    let first = shipping.iter().map(|r| r.version()).min();
    let last = shipping.iter().map(|r| r.version()).max();
    match (first, last) {
        (Some(first), Some(last)) if first == last => first.to_string(),
        (Some(first), Some(last)) => format!("{first}–{last}"),
        _ => String::new(),
    }
}

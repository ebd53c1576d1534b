//! Which CUDA a driver can run (`data/cuda.toml`).
//!
//! Two answers, because renters meet both: the newest toolkit the driver supports fully (what
//! nvidia-smi prints as "CUDA Version"), and the CUDA major families it runs through NVIDIA's
//! minor-version compatibility (a 525.60.13 driver runs any 12.x build, without PTX JIT).

use std::sync::LazyLock;

use serde::Deserialize;

use super::version::{DriverVersion, MajorMinor};

#[derive(Debug, Clone)]
pub struct CudaFamily {
    pub major: u32,
    pub min_driver: DriverVersion,
    pub source: String,
}

#[derive(Debug, Clone)]
pub struct CudaToolkit {
    /// `12.8.1`
    pub version: String,
    pub major_minor: MajorMinor,
    pub bundled_driver: DriverVersion,
    pub source: String,
}

#[derive(Deserialize)]
struct RawFamily {
    major: u32,
    min_driver: String,
    source: String,
}

#[derive(Deserialize)]
struct RawToolkit {
    version: String,
    bundled_driver: String,
    source: String,
}

#[derive(Deserialize)]
struct CudaFile {
    family: Vec<RawFamily>,
    toolkit: Vec<RawToolkit>,
}

struct CudaTable {
    families: Vec<CudaFamily>,
    toolkits: Vec<CudaToolkit>,
}

static TABLE: LazyLock<CudaTable> = LazyLock::new(|| {
    let file: CudaFile = toml::from_str(include_str!("data/cuda.toml"))
        .expect("embedded cuda.toml is valid; see catalog tests");
    let families = file
        .family
        .into_iter()
        .map(|raw| CudaFamily {
            major: raw.major,
            min_driver: raw
                .min_driver
                .parse()
                .expect("cuda.toml family drivers are versions; see catalog tests"),
            source: raw.source,
        })
        .collect();
    let toolkits = file
        .toolkit
        .into_iter()
        .map(|raw| CudaToolkit {
            major_minor: MajorMinor::parse(&raw.version)
                .expect("cuda.toml toolkit versions are x.y.z; see catalog tests"),
            bundled_driver: raw
                .bundled_driver
                .parse()
                .expect("cuda.toml bundled drivers are versions; see catalog tests"),
            version: raw.version,
            source: raw.source,
        })
        .collect();
    CudaTable { families, toolkits }
});

pub fn cuda_families() -> &'static [CudaFamily] {
    &TABLE.families
}

pub fn cuda_toolkits() -> &'static [CudaToolkit] {
    &TABLE.toolkits
}

/// The newest CUDA `major.minor` this driver supports fully: the newest toolkit whose bundled
/// driver is not newer than it. `None` when the driver predates every toolkit in the table
/// (CUDA 11.8, driver 520.61.05); such drivers may still run 11.x builds, see
/// [`cuda_families_for_driver`].
pub fn max_cuda_for_driver(driver: &DriverVersion) -> Option<MajorMinor> {
    cuda_toolkits()
        .iter()
        .filter(|toolkit| toolkit.bundled_driver <= *driver)
        .map(|toolkit| toolkit.major_minor)
        .max()
}

/// The CUDA major versions (11, 12, 13) whose builds this driver runs through minor-version
/// compatibility.
pub fn cuda_families_for_driver(driver: &DriverVersion) -> Vec<u32> {
    cuda_families()
        .iter()
        .filter(|family| family.min_driver <= *driver)
        .map(|family| family.major)
        .collect()
}

/// The oldest driver for a CUDA major family, if the table knows the family.
pub fn family_min_driver(major: u32) -> Option<&'static DriverVersion> {
    cuda_families()
        .iter()
        .find(|family| family.major == major)
        .map(|family| &family.min_driver)
}

/// The oldest driver that supports a CUDA `major.minor` fully (its first toolkit's driver).
pub fn full_support_driver(cuda: MajorMinor) -> Option<&'static DriverVersion> {
    cuda_toolkits()
        .iter()
        .filter(|toolkit| toolkit.major_minor == cuda)
        .map(|toolkit| &toolkit.bundled_driver)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver(text: &str) -> DriverVersion {
        text.parse().expect("test driver versions are valid")
    }

    #[test]
    fn max_cuda_matches_what_nvidia_smi_prints_for_real_captures() {
        // (driver, the "CUDA Version" in the nvidia-smi header of a real capture)
        let captures = [
            ("570.124.06", "12.8"), // thamada-gls-rtx5090
            ("535.54.03", "12.2"),  // telegraf-a100-sxm4-80gb-x4
            ("525.147.05", "12.0"), // telegraf-rtx3090
            ("550.54.14", "12.4"),  // thamada-h100-nvl-x2
            ("560.35.03", "12.6"),  // thamada-rtx3090-x2
            ("555.42.02", "12.5"),  // thamada-a100-sxm4-80gb-x4
            ("575.57.08", "12.9"),  // modal-gpu-glossary-b200
            ("590.44.01", "13.1"),  // telegraf-rtx3090-590.44.01
        ];
        for (version, expected) in captures {
            let got = max_cuda_for_driver(&driver(version)).map(|cc| cc.to_string());
            assert_eq!(got.as_deref(), Some(expected), "driver {version}");
        }
    }

    #[test]
    fn drivers_older_than_the_table_have_no_full_cuda_answer() {
        assert_eq!(max_cuda_for_driver(&driver("470.82.01")), None);
        assert_eq!(cuda_families_for_driver(&driver("470.82.01")), vec![11]);
    }

    #[test]
    fn families_follow_the_minor_version_compatibility_minimums() {
        assert_eq!(cuda_families_for_driver(&driver("450.80.02")), vec![11]);
        assert!(cuda_families_for_driver(&driver("450.51.06")).is_empty());
        assert_eq!(cuda_families_for_driver(&driver("525.60.13")), vec![11, 12]);
        assert_eq!(cuda_families_for_driver(&driver("525.60.12")), vec![11]);
        assert_eq!(
            cuda_families_for_driver(&driver("580.65.06")),
            vec![11, 12, 13]
        );
    }
}

//! The three version-like numbers the catalog compares: NVIDIA driver versions, CUDA versions
//! and compute capabilities. Each parses strictly (no panics on any input) and orders
//! numerically, so "570.124.06" > "570.86.10" and "12.0" > "9.0".

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::CatalogError;

/// An NVIDIA driver version as nvidia-smi prints it: `535.104.05`, `595.84` (Windows), or a
/// bare branch like `580` in tables. Missing trailing parts compare as zero.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DriverVersion {
    parts: Vec<u32>,
    text: String,
}

impl DriverVersion {
    /// The driver branch (`535` for `535.104.05`).
    pub fn branch(&self) -> u32 {
        self.parts.first().copied().unwrap_or(0)
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    fn part(&self, index: usize) -> u32 {
        self.parts.get(index).copied().unwrap_or(0)
    }
}

impl FromStr for DriverVersion {
    type Err = CatalogError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        let bad = || CatalogError::BadDriverVersion(text.to_owned());
        if trimmed.is_empty() {
            return Err(bad());
        }
        let parts = trimmed
            .split('.')
            .map(|part| {
                if part.is_empty() || part.len() > 6 || !part.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                part.parse::<u32>().map_err(|_| bad())
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Real drivers have at most three parts and a branch of at least two digits.
        if parts.len() > 3 || parts[0] < 10 {
            return Err(bad());
        }
        Ok(Self {
            parts,
            text: trimmed.to_owned(),
        })
    }
}

impl Ord for DriverVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        (0..3)
            .map(|i| self.part(i).cmp(&other.part(i)))
            .find(|ord| ord.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for DriverVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// `major.minor`, used both for CUDA versions (`12.8`) and compute capabilities (`8.9`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct MajorMinor {
    pub major: u32,
    pub minor: u32,
}

impl MajorMinor {
    pub const fn new(major: u32, minor: u32) -> Self {
        Self { major, minor }
    }

    /// Parses `8.9`, `12.0`, `sm_89`, `sm_120`, `12.0+PTX` and `11.8.0` (patch ignored).
    pub fn parse(text: &str) -> Option<Self> {
        let trimmed = text.trim();
        let trimmed = trimmed
            .strip_suffix("+PTX")
            .or_else(|| trimmed.strip_suffix("+ptx"))
            .unwrap_or(trimmed);
        if let Some(digits) = trimmed.strip_prefix("sm_") {
            // sm_XY / sm_XYZ: the last digit is the minor version.
            if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            let value: u32 = digits.parse().ok()?;
            return Some(Self::new(value / 10, value % 10));
        }
        let mut parts = trimmed.split('.');
        let major = parse_small(parts.next()?)?;
        let minor = parse_small(parts.next()?)?;
        if let Some(patch) = parts.next() {
            parse_small(patch)?;
        }
        if parts.next().is_some() {
            return None;
        }
        Some(Self::new(major, minor))
    }
}

fn parse_small(part: &str) -> Option<u32> {
    if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    part.parse().ok()
}

impl fmt::Display for MajorMinor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl TryFrom<String> for MajorMinor {
    type Error = String;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value).ok_or_else(|| format!("{value:?} is not a major.minor version"))
    }
}

impl From<MajorMinor> for String {
    fn from(value: MajorMinor) -> Self {
        value.to_string()
    }
}

/// A GPU's compute capability from the user: `8.9`, `12.0` or `sm_120`.
pub fn parse_compute_capability(text: &str) -> Result<MajorMinor, CatalogError> {
    MajorMinor::parse(text)
        .filter(|cc| (1..=20).contains(&cc.major))
        .ok_or_else(|| CatalogError::BadComputeCapability(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver(text: &str) -> DriverVersion {
        text.parse().expect("test driver versions are valid")
    }

    #[test]
    fn driver_versions_order_numerically_not_lexically() {
        assert!(
            driver("570.124.06") > driver("570.86.10"),
            "124 > 86 as numbers"
        );
        assert!(
            driver("580") > driver("575.57.08"),
            "a bare branch compares as 580.0.0"
        );
        assert!(driver("525.60.13") == driver("525.60.13"));
        assert!(
            driver("450.80.02") < driver("470"),
            "470 is newer than 450.80.02"
        );
        assert_eq!(
            driver("595.84").branch(),
            595,
            "Windows versions have two parts"
        );
    }

    #[test]
    fn driver_versions_reject_text_that_is_not_a_version() {
        for bad in [
            "",
            "abc",
            "535.",
            ".535",
            "535.104.05.1",
            "5",
            "-535",
            "535.x",
            "1234567.1",
        ] {
            assert!(
                bad.parse::<DriverVersion>().is_err(),
                "{bad:?} must be rejected as a driver version"
            );
        }
    }

    #[test]
    fn compute_capabilities_parse_in_every_spelling_users_meet() {
        assert_eq!(
            parse_compute_capability("8.9").ok(),
            Some(MajorMinor::new(8, 9))
        );
        assert_eq!(
            parse_compute_capability("12.0").ok(),
            Some(MajorMinor::new(12, 0))
        );
        assert_eq!(
            parse_compute_capability("sm_120").ok(),
            Some(MajorMinor::new(12, 0))
        );
        assert_eq!(
            parse_compute_capability("sm_86").ok(),
            Some(MajorMinor::new(8, 6))
        );
        assert_eq!(MajorMinor::parse("12.0+PTX"), Some(MajorMinor::new(12, 0)));
        for bad in [
            "", "twelve", "8", "8.", "0.5", "99.0", "8.9.1.2", "sm_", "sm_1234",
        ] {
            assert!(
                parse_compute_capability(bad).is_err(),
                "{bad:?} must be rejected as a compute capability"
            );
        }
    }

    #[test]
    fn compute_capabilities_order_by_major_then_minor() {
        assert!(
            MajorMinor::new(12, 0) > MajorMinor::new(9, 0),
            "12.0 is newer than 9.0"
        );
        assert!(MajorMinor::new(8, 9) > MajorMinor::new(8, 6));
    }
}

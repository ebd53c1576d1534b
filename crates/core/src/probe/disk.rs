//! Free space where work lands: `/`, the home folder and the data disks rented images mount
//! (`/root/autodl-tmp` on AutoDL). A full system disk is the classic "pip install died
//! half-way" cause.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sections::{Part, PartOutput};

/// Paths checked besides `/` and `$HOME`; missing ones are skipped on the target.
pub const DATA_PATHS: &[&str] = &[
    "/root/autodl-tmp",
    "/root/autodl-fs",
    "/data",
    "/mnt",
    "/workspace",
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct DiskUsage {
    /// The paths asked about that live on this filesystem (`/`, `/root`, …).
    pub paths: Vec<String>,
    pub mount: String,
    pub filesystem: String,
    #[ts(type = "number")]
    pub size_mib: u64,
    #[ts(type = "number")]
    pub used_mib: u64,
    #[ts(type = "number")]
    pub available_mib: u64,
}

impl DiskUsage {
    pub fn used_pct(&self) -> f64 {
        if self.size_mib == 0 {
            return 0.0;
        }
        self.used_mib as f64 * 100.0 / self.size_mib as f64
    }
}

pub(crate) fn part() -> Part {
    let data: Vec<String> = DATA_PATHS
        .iter()
        .map(|p| crate::shell::quote(p).into_owned())
        .collect();
    Part::new(
        "df",
        format!(
            "for p in / \"$HOME\" {}; do [ -e \"$p\" ] || continue; echo \"path=$p\"; df -kP \"$p\" 2>&1 | tail -n +2; done",
            data.join(" ")
        ),
    )
}

pub(crate) fn parse(parts: &HashMap<String, PartOutput>) -> Vec<DiskUsage> {
    parts
        .get("df")
        .map(|p| parse_df(&p.text))
        .unwrap_or_default()
}

/// Lines `path=/x` each followed by one `df -kP` row.
pub fn parse_df(text: &str) -> Vec<DiskUsage> {
    let mut disks: Vec<DiskUsage> = Vec::new();
    let mut asked: Option<String> = None;
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("path=") {
            asked = Some(path.trim().to_owned());
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() < 6 {
            continue;
        }
        let numbers: Option<Vec<u64>> = words[1..4].iter().map(|w| w.parse::<u64>().ok()).collect();
        let Some(numbers) = numbers else {
            continue;
        };
        let mount = words[5..].join(" ");
        let path = asked.take().unwrap_or_else(|| mount.clone());
        if let Some(existing) = disks.iter_mut().find(|d| d.mount == mount) {
            if !existing.paths.contains(&path) {
                existing.paths.push(path);
            }
            continue;
        }
        disks.push(DiskUsage {
            paths: vec![path],
            mount,
            filesystem: words[0].to_owned(),
            size_mib: numbers[0] / 1024,
            used_mib: numbers[1] / 1024,
            available_mib: numbers[2] / 1024,
        });
    }
    disks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_filesystem_appears_once_with_every_path_on_it() {
        let text = "path=/\noverlay 31457280 29884416 1572864 95% /\npath=/root\noverlay 31457280 29884416 1572864 95% /\npath=/root/autodl-tmp\n/dev/vdb 524288000 1048576 523239424 1% /root/autodl-tmp\n";
        let disks = parse_df(text);
        assert_eq!(disks.len(), 2);
        assert_eq!(disks[0].paths, vec!["/", "/root"]);
        assert_eq!((disks[0].size_mib, disks[0].available_mib), (30720, 1536));
        assert!((disks[0].used_pct() - 95.0).abs() < 0.1);
        assert_eq!(disks[1].mount, "/root/autodl-tmp");
        assert_eq!(disks[1].filesystem, "/dev/vdb");
    }

    #[test]
    fn errors_and_headers_are_skipped() {
        let text = "path=/x\ndf: /x: No such file or directory\nFilesystem 1024-blocks Used Available Capacity Mounted on\n";
        assert!(parse_df(text).is_empty());
    }
}

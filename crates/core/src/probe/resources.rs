//! CPU cores and memory as the instance can really use them, container limits included.
//!
//! `/proc/cpuinfo` and `/proc/meminfo` show the host; a container is held to its cgroup quota
//! (`cpu.max`, `memory.max` in cgroup v2, `cpu.cfs_quota_us` / `memory.limit_in_bytes` in v1).
//! A "no-GPU mode" container shows 64 host cores but gets half of one and 2 GiB.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sections::{Part, PartOutput};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub struct ResourceFacts {
    /// CPUs this process may run on (`nproc`).
    pub cpus_online: Option<u32>,
    /// CPUs the host has (`/proc/cpuinfo`).
    pub cpus_host: Option<u32>,
    pub cpu_model: Option<String>,
    /// The cgroup CPU quota in cores (`cpu.max` 50000/100000 → 0.5); `None` when unlimited.
    pub cpu_quota_cores: Option<f64>,
    #[ts(type = "number | null")]
    pub memory_host_mib: Option<u64>,
    #[ts(type = "number | null")]
    pub memory_available_mib: Option<u64>,
    /// The cgroup memory limit; `None` when unlimited.
    #[ts(type = "number | null")]
    pub memory_limit_mib: Option<u64>,
}

impl ResourceFacts {
    /// Cores the workload can actually use: the smaller of `nproc` and the quota.
    pub fn effective_cpus(&self) -> Option<f64> {
        let online = self.cpus_online.or(self.cpus_host).map(f64::from);
        match (online, self.cpu_quota_cores) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Memory the workload can actually use: the smaller of the host and the limit.
    pub fn effective_memory_mib(&self) -> Option<u64> {
        match (self.memory_host_mib, self.memory_limit_mib) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

pub(crate) fn parts() -> Vec<Part> {
    vec![
        Part::new("nproc", "nproc"),
        Part::new(
            "cpuinfo",
            "grep -c '^processor' /proc/cpuinfo; grep -m1 '^model name' /proc/cpuinfo",
        ),
        Part::new(
            "meminfo",
            "grep -E '^(MemTotal|MemAvailable):' /proc/meminfo",
        ),
        Part::new(
            "cgroup",
            r#"p=$(awk -F: '$1=="0" {print $3}' /proc/self/cgroup 2>/dev/null)
for f in "/sys/fs/cgroup$p/cpu.max" /sys/fs/cgroup/cpu.max; do [ -r "$f" ] && { echo "cpu.max=$(cat "$f")"; break; }; done
for f in "/sys/fs/cgroup$p/memory.max" /sys/fs/cgroup/memory.max; do [ -r "$f" ] && { echo "memory.max=$(cat "$f")"; break; }; done
[ -r /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] && echo "cfs_quota_us=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us)"
[ -r /sys/fs/cgroup/cpu/cpu.cfs_period_us ] && echo "cfs_period_us=$(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"
[ -r /sys/fs/cgroup/memory/memory.limit_in_bytes ] && echo "limit_in_bytes=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"
true"#,
        ),
    ]
}

/// Limits at or above this are the kernel's way of saying "unlimited" (v1 prints ~2^63).
const UNLIMITED_BYTES: u64 = 1 << 60;

pub(crate) fn parse(parts: &HashMap<String, PartOutput>) -> ResourceFacts {
    let text = |name: &str| parts.get(name).map(|p| p.text.as_str()).unwrap_or("");
    let mut facts = ResourceFacts {
        cpus_online: text("nproc").trim().parse().ok(),
        ..ResourceFacts::default()
    };
    for line in text("cpuinfo").lines() {
        if let Some(model) = line
            .split_once(':')
            .filter(|(k, _)| k.trim() == "model name")
        {
            facts.cpu_model = Some(model.1.trim().to_owned());
        } else if let Ok(count) = line.trim().parse::<u32>() {
            facts.cpus_host = Some(count);
        }
    }
    for line in text("meminfo").lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let kib = rest
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok());
        match key.trim() {
            "MemTotal" => facts.memory_host_mib = kib.map(|k| k / 1024),
            "MemAvailable" => facts.memory_available_mib = kib.map(|k| k / 1024),
            _ => {}
        }
    }
    let cgroup: HashMap<&str, &str> = text("cgroup")
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    facts.cpu_quota_cores = cgroup
        .get("cpu.max")
        .and_then(|v| parse_cpu_max(v))
        .or_else(|| quota_v1(cgroup.get("cfs_quota_us")?, cgroup.get("cfs_period_us")?));
    facts.memory_limit_mib = cgroup
        .get("memory.max")
        .or_else(|| cgroup.get("limit_in_bytes"))
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|bytes| *bytes < UNLIMITED_BYTES)
        .map(|bytes| bytes / (1024 * 1024));
    facts
}

/// cgroup v2 `cpu.max`: `max 100000` (unlimited) or `50000 100000` (half a core).
pub fn parse_cpu_max(text: &str) -> Option<f64> {
    let mut words = text.split_whitespace();
    let quota = words.next()?.parse::<f64>().ok()?;
    let period = words
        .next()
        .map_or(Some(100_000.0), |p| p.parse::<f64>().ok())?;
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

fn quota_v1(quota: &str, period: &str) -> Option<f64> {
    let quota = quota.parse::<f64>().ok()?;
    let period = period.parse::<f64>().ok()?;
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_of(pairs: &[(&str, &str)]) -> HashMap<String, PartOutput> {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    (*k).to_owned(),
                    PartOutput {
                        text: (*v).to_owned(),
                        exit: Some(0),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn no_gpu_mode_container_is_held_to_half_a_core_and_two_gib() {
        let facts = parse(&parts_of(&[
            ("nproc", "64"),
            (
                "cpuinfo",
                "64\nmodel name\t: Intel(R) Xeon(R) Platinum 8352V CPU @ 2.10GHz",
            ),
            (
                "meminfo",
                "MemTotal:       527958020 kB\nMemAvailable:   401234560 kB",
            ),
            ("cgroup", "cpu.max=50000 100000\nmemory.max=2147483648"),
        ]));
        assert_eq!(facts.cpu_quota_cores, Some(0.5));
        assert_eq!(
            facts.effective_cpus(),
            Some(0.5),
            "the quota, not the 64 host cores"
        );
        assert_eq!(facts.memory_limit_mib, Some(2048));
        assert_eq!(facts.effective_memory_mib(), Some(2048));
        assert_eq!(
            facts.cpu_model.as_deref(),
            Some("Intel(R) Xeon(R) Platinum 8352V CPU @ 2.10GHz")
        );
        assert_eq!(facts.memory_host_mib, Some(515584));
    }

    #[test]
    fn unlimited_cgroups_leave_the_host_figures() {
        let v2 = parse(&parts_of(&[
            ("nproc", "16"),
            ("cgroup", "cpu.max=max 100000\nmemory.max=max"),
        ]));
        assert_eq!((v2.cpu_quota_cores, v2.memory_limit_mib), (None, None));
        assert_eq!(v2.effective_cpus(), Some(16.0));
        let v1 = parse(&parts_of(&[(
            "cgroup",
            "cfs_quota_us=-1\ncfs_period_us=100000\nlimit_in_bytes=9223372036854771712",
        )]));
        assert_eq!((v1.cpu_quota_cores, v1.memory_limit_mib), (None, None));
    }

    #[test]
    fn cgroup_v1_quota_is_read() {
        let facts = parse(&parts_of(&[(
            "cgroup",
            "cfs_quota_us=800000\ncfs_period_us=100000\nlimit_in_bytes=68719476736",
        )]));
        assert_eq!(
            (facts.cpu_quota_cores, facts.memory_limit_mib),
            (Some(8.0), Some(65536))
        );
    }
}

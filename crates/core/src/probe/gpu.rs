//! The GPU probe: `nvidia-smi` (query CSV, compute apps, plain table), the kernel module and its
//! device nodes, and whether the processes holding GPU memory are alive in this container.
//!
//! The query CSV gives the rich per-GPU fields; the plain table is still run because only it
//! prints the CUDA version the driver supports, and it is the fallback when an old driver
//! rejects a query field.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::nvidia_smi::{self, NvidiaSmiReport, NvidiaSmiStatus};
use super::sections::{Part, PartOutput};

/// Fields asked of drivers that know them all (R510 onwards).
pub const QUERY_FIELDS: &str = "index,name,uuid,pci.bus_id,driver_version,memory.total,memory.used,utilization.gpu,temperature.gpu,power.draw,power.limit,compute_cap,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks.sm,clocks.max.sm,clocks.mem,pstate,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,mig.mode.current";
/// The fallback when an old driver rejects a field ("is not a valid field to query").
pub const QUERY_FIELDS_MINIMAL: &str = "index,name,uuid,pci.bus_id,driver_version,memory.total,memory.used,utilization.gpu,temperature.gpu,power.draw,power.limit";
pub const APPS_FIELDS: &str = "gpu_uuid,gpu_bus_id,pid,process_name,used_gpu_memory";

/// Where nvidia-smi lives when it is installed but not on PATH.
const KNOWN_LOCATIONS: &[&str] = &[
    "/usr/bin/nvidia-smi",
    "/usr/local/nvidia/bin/nvidia-smi",
    "/usr/local/bin/nvidia-smi",
    "/usr/lib/wsl/lib/nvidia-smi",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct GpuFacts {
    pub nvidia_smi: NvidiaSmiReport,
    /// `command -v nvidia-smi`.
    pub nvidia_smi_path: Option<String>,
    /// nvidia-smi binaries present in well-known places (useful when it is not on PATH).
    pub nvidia_smi_found_at: Vec<String>,
    /// Loaded kernel modules whose name starts with `nvidia`.
    pub kernel_modules: Vec<String>,
    /// First line of `/proc/driver/nvidia/version`.
    pub kernel_module_version: Option<String>,
    pub device_nodes: Vec<String>,
    /// For each PID holding GPU memory: whether it exists here and its state letter (`Z` = zombie).
    pub process_states: Vec<ProcessState>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ProcessState {
    pub pid: u32,
    /// False when the PID is not in this PID namespace (another container, or already gone).
    pub visible: bool,
    /// `R`, `S`, `D`, `Z`, … from `/proc/PID/stat`.
    pub state: Option<String>,
}

pub(crate) fn parts() -> Vec<Part> {
    let locations: Vec<String> = KNOWN_LOCATIONS
        .iter()
        .map(|p| crate::shell::quote(p).into_owned())
        .collect();
    vec![
        Part::new(
            "where",
            format!("echo \"path=$(command -v nvidia-smi)\"; for f in {}; do [ -x \"$f\" ] && echo \"found=$f\"; done; true", locations.join(" ")),
        ),
        Part::new(
            "query-gpu",
            format!("nvidia-smi --query-gpu={QUERY_FIELDS} --format=csv || nvidia-smi --query-gpu={QUERY_FIELDS_MINIMAL} --format=csv"),
        ),
        Part::new(
            "compute-apps",
            format!("apps=$(nvidia-smi --query-compute-apps={APPS_FIELDS} --format=csv 2>&1); rc=$?; printf '%s\\n' \"$apps\"; (exit $rc)"),
        ),
        Part::new(
            "pids",
            r#"printf '%s\n' "$apps" | awk -F', *' 'NR > 1 && $3 ~ /^[0-9]+$/ {print $3}' | while read -r p; do
  if [ -r "/proc/$p/stat" ]; then echo "$p $(sed -n 's/.*) \(.\).*/\1/p' "/proc/$p/stat")"; else echo "$p -"; fi
done"#,
        ),
        Part::new("table", "nvidia-smi"),
        Part::new("modules", "grep -i '^nvidia' /proc/modules 2>/dev/null || lsmod 2>/dev/null | grep -i '^nvidia'; true"),
        Part::new("driver-version", "cat /proc/driver/nvidia/version"),
        Part::new("device-nodes", "ls -1 /dev/nvidia* 2>/dev/null; true"),
    ]
}

pub(crate) fn parse(parts: &HashMap<String, PartOutput>) -> GpuFacts {
    let text = |name: &str| parts.get(name).map(|p| p.text.as_str()).unwrap_or("");
    let mut found_at = Vec::new();
    let mut path = None;
    for line in text("where").lines() {
        if let Some(p) = line.strip_prefix("path=").filter(|p| !p.trim().is_empty()) {
            path = Some(p.trim().to_owned());
        } else if let Some(p) = line.strip_prefix("found=") {
            found_at.push(p.trim().to_owned());
        }
    }
    GpuFacts {
        nvidia_smi: merge(text("query-gpu"), text("compute-apps"), text("table")),
        nvidia_smi_path: path,
        nvidia_smi_found_at: found_at,
        kernel_modules: text("modules")
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|m| m.starts_with("nvidia"))
            .map(str::to_owned)
            .collect(),
        kernel_module_version: parts
            .get("driver-version")
            .filter(|p| p.succeeded())
            .and_then(|p| p.text.lines().find(|l| l.contains("NVRM version")))
            .map(|l| l.trim().to_owned()),
        device_nodes: text("device-nodes")
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("/dev/nvidia"))
            .map(str::to_owned)
            .collect(),
        process_states: text("pids").lines().filter_map(process_state).collect(),
    }
}

fn process_state(line: &str) -> Option<ProcessState> {
    let mut words = line.split_whitespace();
    let pid = words.next()?.parse().ok()?;
    let state = words.next().unwrap_or("-");
    Some(ProcessState {
        pid,
        visible: state != "-",
        state: (state != "-").then(|| state.to_owned()),
    })
}

/// One report from the three outputs: GPUs from the query (the table when the query failed),
/// the CUDA version from the table, processes from the compute-apps query.
pub fn merge(query: &str, apps: &str, table: &str) -> NvidiaSmiReport {
    let from_query = nvidia_smi::parse(query);
    let from_table = nvidia_smi::parse(table);
    let mut report = if !from_query.gpus.is_empty() {
        from_query
    } else if from_table.status != NvidiaSmiStatus::Unrecognized {
        from_table.clone()
    } else {
        from_query
    };
    if report.cuda_version.is_none() {
        report.cuda_version.clone_from(&from_table.cuda_version);
    }
    if report.driver_version.is_none() {
        report.driver_version.clone_from(&from_table.driver_version);
    }
    if report.mig_devices.is_empty() {
        report.mig_devices.clone_from(&from_table.mig_devices);
    }
    let compute = nvidia_smi::parse_compute_apps_csv(apps);
    let mut processes = compute;
    for table_process in &from_table.processes {
        match processes.iter_mut().find(|p| p.pid == table_process.pid) {
            Some(existing) => {
                existing.kind.clone_from(&table_process.kind);
                if existing.gpu_index.is_none() {
                    existing.gpu_index = table_process.gpu_index;
                }
            }
            None => processes.push(table_process.clone()),
        }
    }
    report.processes = processes;
    report.link_processes();
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_table_and_apps_merge_into_one_report() {
        let query = "index, name, uuid, pci.bus_id, driver_version, memory.total [MiB], memory.used [MiB], utilization.gpu [%], temperature.gpu, power.draw [W], power.limit [W], compute_cap\n0, NVIDIA GeForce RTX 4090, GPU-aaaa, 00000000:01:00.0, 550.127.05, 24564 MiB, 20001 MiB, 0 %, 35, 30.12 W, 450.00 W, 8.9";
        let apps = "gpu_uuid, gpu_bus_id, pid, process_name, used_gpu_memory [MiB]\nGPU-aaaa, 00000000:01:00.0, 4242, python, 19990 MiB";
        let table = "| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     CUDA Version: 12.4     |\n| Processes:        |\n|    0   N/A  N/A            4242      C   python                                19990MiB |";
        let report = merge(query, apps, table);
        assert_eq!(report.status, NvidiaSmiStatus::Ok);
        assert_eq!(
            report.cuda_version.as_deref(),
            Some("12.4"),
            "only the table has it"
        );
        assert_eq!(report.gpus[0].compute_cap.as_deref(), Some("8.9"));
        assert_eq!(
            report.processes.len(),
            1,
            "the same PID from both sources is one process"
        );
        assert_eq!(
            report.processes[0].gpu_index,
            Some(0),
            "mapped through the UUID"
        );
        assert_eq!(report.processes[0].kind.as_deref(), Some("C"));
    }

    #[test]
    fn missing_binary_reports_not_installed() {
        let missing = "sh: 1: nvidia-smi: not found";
        let report = merge(missing, missing, missing);
        assert_eq!(report.status, NvidiaSmiStatus::NotInstalled);
    }

    #[test]
    fn process_visibility_is_read() {
        let facts = parse(
            &[
                ("pids", "4242 Z\n999 -"),
                ("where", "path=\nfound=/usr/local/nvidia/bin/nvidia-smi"),
            ]
            .into_iter()
            .map(|(k, v)| {
                (
                    k.to_owned(),
                    PartOutput {
                        text: v.to_owned(),
                        exit: Some(0),
                    },
                )
            })
            .collect(),
        );
        assert_eq!(
            facts.process_states[0],
            ProcessState {
                pid: 4242,
                visible: true,
                state: Some("Z".into())
            }
        );
        assert!(!facts.process_states[1].visible);
        assert_eq!(facts.nvidia_smi_path, None);
        assert_eq!(
            facts.nvidia_smi_found_at,
            vec!["/usr/local/nvidia/bin/nvidia-smi"]
        );
    }
}

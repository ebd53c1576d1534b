//! `--query-gpu` and `--query-compute-apps` CSV, with a header (units or not) and without.
//!
//! nvidia-smi never quotes, so a row is split on commas. With a header, columns are found by
//! field name (`memory.total [MiB]` → `memory.total`). Without one the columns cannot name
//! themselves, so only layouts recognisable by shape are read: timestamp, GPU index, name and
//! UUID by their look, and memory as the `total, free, used` triple whose parts add up (the
//! order of the widely copied monitoring query). Anything else stays `None`.

use super::value;
use super::{GpuInfo, GpuProcess, GpuState, NvidiaSmiReport, NvidiaSmiStatus};

/// True when some line has commas and no table border.
pub(crate) fn looks_like_csv(text: &str) -> bool {
    text.lines()
        .any(|line| line.contains(',') && !line.trim_start().starts_with('|'))
}

fn split(line: &str) -> Vec<&str> {
    line.split(',').map(str::trim).collect()
}

/// `memory.total [MiB]` → `memory.total`; field names are lower-case ASCII with dots/underscores.
fn field_name(cell: &str) -> Option<String> {
    let name = cell.split_once(" [").map_or(cell, |(name, _)| name).trim();
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_'))
        && name.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    valid.then(|| name.to_owned())
}

fn header(line: &str) -> Option<Vec<String>> {
    let names: Option<Vec<String>> = split(line).into_iter().map(field_name).collect();
    names.filter(|n| n.iter().any(|f| KNOWN_FIELDS.contains(&f.as_str())))
}

const KNOWN_FIELDS: &[&str] = &[
    "index",
    "name",
    "uuid",
    "pid",
    "gpu_uuid",
    "gpu_name",
    "memory.total",
    "memory.used",
    "utilization.gpu",
    "temperature.gpu",
    "power.draw",
    "driver_version",
    "process_name",
    "used_gpu_memory",
    "used_memory",
    "pci.bus_id",
    "timestamp",
];

/// Parse one or more CSV blocks; GPU rows and process rows may both be present.
pub(crate) fn parse_any_csv(text: &str) -> NvidiaSmiReport {
    let mut report = NvidiaSmiReport::with_status(NvidiaSmiStatus::Ok);
    let mut columns: Option<Vec<String>> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || !trimmed.contains(',') {
            continue;
        }
        if let Some(names) = header(trimmed) {
            columns = Some(names);
            continue;
        }
        let cells = split(trimmed);
        match &columns {
            Some(names) if names.iter().any(|n| n == "pid") => {
                if let Some(process) = process_from(names, &cells) {
                    report.processes.push(process);
                }
            }
            Some(names) => {
                let next = next_index(&report);
                let row = Row {
                    names,
                    cells: &cells,
                };
                if report.driver_version.is_none() {
                    report.driver_version = row.text(&["driver_version"]);
                }
                report.gpus.push(gpu_from_named(&row, next));
            }
            None if fits_monitoring_layout(&cells) => {
                let names: Vec<String> =
                    MONITORING_LAYOUT.iter().map(|n| (*n).to_owned()).collect();
                let row = Row {
                    names: &names,
                    cells: &cells,
                };
                let next = next_index(&report);
                report.gpus.push(gpu_from_named(&row, next));
            }
            None => {
                if let Some(gpu) = gpu_from_shape(&cells, next_index(&report)) {
                    report.gpus.push(gpu);
                }
            }
        }
    }
    if report.gpus.is_empty() && report.processes.is_empty() {
        report.status = NvidiaSmiStatus::Unrecognized;
    }
    report.link_processes();
    report
}

fn next_index(report: &NvidiaSmiReport) -> u32 {
    u32::try_from(report.gpus.len()).unwrap_or(u32::MAX)
}

/// Parse only `--query-gpu` CSV (with or without a header).
pub fn parse_query_gpu_csv(text: &str) -> NvidiaSmiReport {
    parse_any_csv(text)
}

/// Parse only `--query-compute-apps` CSV (with a header).
pub fn parse_compute_apps_csv(text: &str) -> Vec<GpuProcess> {
    parse_any_csv(text).processes
}

struct Row<'a> {
    names: &'a [String],
    cells: &'a [&'a str],
}

impl Row<'_> {
    fn get(&self, aliases: &[&str]) -> Option<&str> {
        aliases.iter().find_map(|alias| {
            let at = self.names.iter().position(|n| n == alias)?;
            self.cells.get(at).copied()
        })
    }
    fn int(&self, aliases: &[&str]) -> Option<u32> {
        self.get(aliases)
            .and_then(|raw| value::small(value::integer(raw)))
    }
    fn big(&self, aliases: &[&str]) -> Option<u64> {
        self.get(aliases).and_then(value::integer)
    }
    fn dec(&self, aliases: &[&str]) -> Option<f64> {
        self.get(aliases).and_then(value::decimal)
    }
    fn text(&self, aliases: &[&str]) -> Option<String> {
        self.get(aliases).and_then(value::text)
    }
}

fn gpu_from_named(row: &Row<'_>, fallback_index: u32) -> GpuInfo {
    let (names, cells) = (row.names, row.cells);
    let name = row.text(&["name", "gpu_name"]);
    let mut gpu = GpuInfo {
        index: row.int(&["index"]).unwrap_or(fallback_index),
        name_truncated: false,
        name,
        uuid: row.text(&["uuid", "gpu_uuid"]),
        bus_id: row.text(&["pci.bus_id", "gpu_bus_id"]),
        memory_total_mib: row.int(&["memory.total"]),
        memory_used_mib: row.int(&["memory.used"]),
        utilization_pct: row.int(&["utilization.gpu"]),
        temperature_c: row
            .get(&["temperature.gpu"])
            .and_then(value::signed)
            .and_then(|t| i32::try_from(t).ok()),
        power_draw_w: row.dec(&["power.draw", "power.draw.instant", "power.draw.average"]),
        power_limit_w: row.dec(&["power.limit", "enforced.power.limit"]),
        compute_cap: row.text(&["compute_cap"]),
        pcie_gen_current: row.int(&["pcie.link.gen.gpucurrent", "pcie.link.gen.current"]),
        pcie_gen_max: row.int(&["pcie.link.gen.max", "pcie.link.gen.gpumax"]),
        pcie_width_current: row.int(&["pcie.link.width.current"]),
        pcie_width_max: row.int(&["pcie.link.width.max"]),
        clock_sm_mhz: row.int(&["clocks.sm", "clocks.current.sm"]),
        clock_sm_max_mhz: row.int(&["clocks.max.sm", "clocks.max.graphics"]),
        clock_mem_mhz: row.int(&["clocks.mem", "clocks.current.memory"]),
        pstate: row.text(&["pstate"]),
        ecc_uncorrected_volatile: row.big(&["ecc.errors.uncorrected.volatile.total"]),
        ecc_corrected_volatile: row.big(&["ecc.errors.corrected.volatile.total"]),
        mig_enabled: row.text(&["mig.mode.current"]).map(|m| m == "Enabled"),
        state: GpuState::Ok,
        failed_fields: Vec::new(),
    };
    for (at, raw) in cells.iter().enumerate() {
        if value::is_failure(raw) {
            gpu.state = GpuState::Error;
            let field = names
                .get(at)
                .cloned()
                .unwrap_or_else(|| format!("column {at}"));
            gpu.failed_fields.push(field);
        }
    }
    gpu
}

fn process_from(names: &[String], cells: &[&str]) -> Option<GpuProcess> {
    let row = Row { names, cells };
    Some(GpuProcess {
        gpu_index: None,
        gpu_uuid: row.text(&["gpu_uuid"]),
        gpu_bus_id: row.text(&["gpu_bus_id"]),
        pid: row.int(&["pid"])?,
        name: row.text(&["process_name", "name"]).unwrap_or_default(),
        kind: None,
        used_memory_mib: row.int(&["used_gpu_memory", "used_memory"]),
    })
}

fn is_timestamp(cell: &str) -> bool {
    let b = cell.as_bytes();
    b.len() >= 10 && b[4] == b'/' && b[7] == b'/' && b[..4].iter().all(u8::is_ascii_digit)
}

fn is_uuid(cell: &str) -> bool {
    cell.starts_with("GPU-") || cell.starts_with("MIG-")
}

/// The headerless query that monitoring scripts copy from one another (zabbix and friends):
/// `timestamp,index,name,uuid,serial,utilization.gpu,utilization.memory,memory.total,…`.
/// Recognised by its shape: a timestamp, an index, a name and a UUID in the first four columns.
const MONITORING_LAYOUT: &[&str] = &[
    "timestamp",
    "index",
    "name",
    "uuid",
    "serial",
    "utilization.gpu",
    "utilization.memory",
    "memory.total",
    "memory.free",
    "memory.used",
    "power.draw",
    "power.limit",
    "fan.speed",
    "temperature.gpu",
    "compute_mode",
    "clocks.current.graphics",
    "clocks.current.sm",
    "clocks.current.memory",
    "clocks.current.video",
    "gpu_operation_mode.current",
    "pstate",
];

fn fits_monitoring_layout(cells: &[&str]) -> bool {
    cells.len() >= MONITORING_LAYOUT.len()
        && is_timestamp(cells[0])
        && cells[1].parse::<u32>().is_ok()
        && BRANDS.iter().any(|brand| cells[2].contains(brand))
        && is_uuid(cells[3])
        && matches!(
            cells[14],
            "Default" | "Exclusive_Process" | "Prohibited" | "Exclusive_Thread"
        )
}

/// Words that only a GPU product name contains; a headerless row must name its GPU with one.
const BRANDS: &[&str] = &[
    "NVIDIA", "GeForce", "Tesla", "Quadro", "TITAN", "RTX", "GTX",
];

/// A headerless row: read only what identifies itself.
fn gpu_from_shape(cells: &[&str], fallback_index: u32) -> Option<GpuInfo> {
    let name_at = cells.iter().position(|c| {
        value::text(c).is_some_and(|t| {
            BRANDS.iter().any(|brand| t.contains(brand)) && !is_timestamp(&t) && !is_uuid(&t)
        })
    })?;
    let index = cells[..name_at]
        .iter()
        .rev()
        .find_map(|c| c.parse::<u32>().ok())
        .unwrap_or(fallback_index);
    let mut gpu = GpuInfo {
        index,
        name: value::text(cells[name_at]),
        uuid: cells.iter().find(|c| is_uuid(c)).map(|c| (*c).to_owned()),
        ..GpuInfo::default()
    };
    let numbers: Vec<Option<u64>> = cells
        .iter()
        .map(|c| match value::read(c) {
            value::Reading::Value(v) if v.chars().all(|ch| ch.is_ascii_digit()) => v.parse().ok(),
            _ => None,
        })
        .collect();
    for at in 0..numbers.len().saturating_sub(2) {
        if let (Some(total), Some(free), Some(used)) =
            (numbers[at], numbers[at + 1], numbers[at + 2])
        {
            if total > 0 && free.checked_add(used) == Some(total) {
                gpu.memory_total_mib = value::small(Some(total));
                gpu.memory_used_mib = value::small(Some(used));
                break;
            }
        }
    }
    for (at, raw) in cells.iter().enumerate() {
        if value::is_failure(raw) {
            gpu.state = GpuState::Error;
            gpu.failed_fields.push(format!("column {at}"));
        }
    }
    Some(gpu)
}

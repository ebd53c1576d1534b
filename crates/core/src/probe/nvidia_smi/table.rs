//! The plain `nvidia-smi` table, old (≤ 525) and new (≥ 530) layouts, with MIG and process blocks.
//!
//! Both layouts put a GPU in two or three `|`-separated rows: index/name/persistence | bus id |
//! ECC, then fan/temp/perf/power | memory | utilisation/compute mode, then (new layout) the MIG
//! mode. Rows are recognised by their shape (a PCI bus id in the middle cell, `MiB` in it), not
//! by column offsets, so width changes between drivers do not matter.

use std::sync::LazyLock;

use regex::Regex;

use super::value::{self, Reading};
use super::{GpuInfo, GpuProcess, GpuState, MigDevice, NvidiaSmiReport, NvidiaSmiStatus};

static HEADER_DRIVER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:Driver|KMD) Version:\s*([0-9][0-9.]*|N/A)").expect("static regex")
});
static HEADER_CUDA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"CUDA (?:UMD )?Version:\s*([0-9][0-9.]*|N/A)").expect("static regex")
});
static BUS_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")
        .expect("static regex")
});
static MEMORY_PAIR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\S+)\s*/\s*(\S+)").expect("static regex"));

/// True when the text has the table's header or at least one GPU row.
pub(crate) fn looks_like_table(text: &str) -> bool {
    text.contains("NVIDIA-SMI ") && text.contains('|')
        || text
            .lines()
            .any(|line| gpu_first_row(&cells(line)).is_some())
}

fn cells(line: &str) -> Vec<&str> {
    let trimmed = line.trim();
    if !trimmed.starts_with('|') {
        return Vec::new();
    }
    let inner = trimmed.trim_start_matches('|').trim_end_matches('|');
    inner.split('|').collect()
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Section {
    Gpus,
    Mig,
    Processes,
}

/// Parse a plain table. Never fails: what cannot be read stays `None`.
pub fn parse_table(text: &str) -> NvidiaSmiReport {
    let mut report = NvidiaSmiReport::with_status(NvidiaSmiStatus::Ok);
    let mut section = Section::Gpus;
    // Row within the current GPU block: 1 after the name row, 2 after the usage row.
    let mut gpu_row = 0;
    for line in text.lines() {
        if line.contains("NVIDIA-SMI ") {
            report.driver_version = capture(&HEADER_DRIVER, line);
            report.cuda_version = capture(&HEADER_CUDA, line);
            continue;
        }
        if line.contains("MIG devices:") {
            section = Section::Mig;
            continue;
        }
        if line.contains("Processes:") {
            section = Section::Processes;
            continue;
        }
        let row = cells(line);
        if row.is_empty() {
            continue;
        }
        match section {
            Section::Gpus => {
                if let Some(gpu) = gpu_first_row(&row) {
                    report.gpus.push(gpu);
                    gpu_row = 1;
                } else if let Some(gpu) = report.gpus.last_mut() {
                    if gpu_row == 1 && row.len() >= 3 && row[1].contains("MiB") {
                        fill_usage_row(gpu, &row);
                        gpu_row = 2;
                    } else if gpu_row == 2 && row.len() >= 3 {
                        fill_mig_row(gpu, &row);
                        gpu_row = 3;
                    }
                }
            }
            Section::Mig => {
                if let Some(device) = mig_row(&row) {
                    report.mig_devices.push(device);
                }
            }
            Section::Processes => {
                if let Some(process) = process_row(&row) {
                    report.processes.push(process);
                }
            }
        }
    }
    if report.gpus.is_empty() && report.driver_version.is_none() {
        report.status = NvidiaSmiStatus::Unrecognized;
    }
    report
}

fn capture(pattern: &Regex, line: &str) -> Option<String> {
    let found = pattern.captures(line)?.get(1)?.as_str();
    (found != "N/A").then(|| found.trim_end_matches('.').to_owned())
}

/// `   0  NVIDIA GeForce RTX 4090        On  ` | `00000000:01:00.0 Off` | `Off`
fn gpu_first_row(row: &[&str]) -> Option<GpuInfo> {
    if row.len() < 3 {
        return None;
    }
    let bus = row[1].split_whitespace().next()?;
    if !BUS_ID.is_match(bus) {
        return None;
    }
    let first = row[0].trim();
    let (index_text, rest) = first.split_once(char::is_whitespace)?;
    let index = index_text.parse::<u32>().ok()?;
    let rest = rest.trim();
    // The last word is Persistence-M (On/Off) or, on Windows, the driver model (WDDM/TCC).
    let name = match rest.rsplit_once(char::is_whitespace) {
        Some((name, mode)) if is_mode_word(mode) => name.trim(),
        _ => rest,
    };
    let mut gpu = GpuInfo {
        index,
        name_truncated: name.ends_with("..."),
        name: (!name.is_empty()).then(|| name.to_owned()),
        bus_id: Some(bus.to_owned()),
        ..GpuInfo::default()
    };
    note_failures(&mut gpu, "persistence_mode", row[0]);
    note_failures(&mut gpu, "ecc", row[2]);
    Some(gpu)
}

fn is_mode_word(word: &str) -> bool {
    matches!(word, "On" | "Off" | "WDDM" | "TCC" | "MCDM" | "N/A") || value::is_failure(word)
}

/// `  0%   28C    P8    20W /  450W ` | `   2MiB /  24564MiB ` | `   0%      Default `
fn fill_usage_row(gpu: &mut GpuInfo, row: &[&str]) {
    // `N/A   31C    P8    33W /  350W`: the power pair is split by a lone `/` word (the fan and
    // temperature may themselves read `N/A`, so the first slash is not the separator).
    let words: Vec<&str> = row[0].split_whitespace().collect();
    let slash = words.iter().position(|w| *w == "/").unwrap_or(words.len());
    let left_words = &words[..slash];
    let right = words.get(slash + 1..).unwrap_or(&[]);
    if let Some(temp) = left_words.get(1) {
        gpu.temperature_c = value::signed(temp).and_then(|t| i32::try_from(t).ok());
        note_failures(gpu, "temperature", temp);
    }
    if let Some(fan) = left_words.first() {
        note_failures(gpu, "fan", fan);
    }
    if let Some(perf) = left_words.get(2) {
        gpu.pstate = value::text(perf);
    }
    if let Some(draw) = left_words.get(3) {
        gpu.power_draw_w = value::decimal(draw);
        note_failures(gpu, "power_draw", draw);
    }
    if let Some(cap) = right.first() {
        gpu.power_limit_w = value::decimal(cap);
        note_failures(gpu, "power_limit", cap);
    }
    if let Some(pair) = MEMORY_PAIR.captures(row[1]) {
        let used = pair.get(1).map_or("", |m| m.as_str());
        let total = pair.get(2).map_or("", |m| m.as_str());
        gpu.memory_used_mib = value::small(value::integer(used));
        gpu.memory_total_mib = value::small(value::integer(total));
    }
    note_failures(gpu, "memory", row[1]);
    if let Some(util) = row[2].split_whitespace().next() {
        gpu.utilization_pct = value::small(value::integer(util));
        note_failures(gpu, "utilization", util);
    }
}

/// The new layout's third row carries the MIG mode in its last cell.
fn fill_mig_row(gpu: &mut GpuInfo, row: &[&str]) {
    match row[2].trim() {
        "Enabled" => gpu.mig_enabled = Some(true),
        "Disabled" => gpu.mig_enabled = Some(false),
        _ => {}
    }
}

fn note_failures(gpu: &mut GpuInfo, field: &str, raw: &str) {
    if value::is_failure(raw) {
        gpu.state = GpuState::Error;
        if !gpu.failed_fields.iter().any(|f| f == field) {
            gpu.failed_fields.push(field.to_owned());
        }
    }
}

/// `  0    2   0   0  |   11091MiB / 40448MiB  | 60  0 | …`
fn mig_row(row: &[&str]) -> Option<MigDevice> {
    if row.len() < 2 {
        return None;
    }
    let ids: Vec<Option<u32>> = row[0]
        .split_whitespace()
        .map(|w| w.parse::<u32>().ok())
        .collect();
    if ids.len() != 4 {
        return None;
    }
    let gpu_index = ids[0]?;
    let pair = MEMORY_PAIR.captures(row[1])?;
    Some(MigDevice {
        gpu_index,
        gpu_instance: ids[1],
        compute_instance: ids[2],
        mig_index: ids[3],
        memory_used_mib: value::small(value::integer(pair.get(1)?.as_str())),
        memory_total_mib: value::small(value::integer(pair.get(2)?.as_str())),
    })
}

/// `    0   N/A  N/A      1720      G   /usr/bin/gnome-shell      173MiB `; drivers before
/// MIG existed print no GI/CI columns: `    0      1720      C   python      1005MiB `.
fn process_row(row: &[&str]) -> Option<GpuProcess> {
    let cell = *row.first()?;
    let words: Vec<(usize, &str)> = word_spans(cell);
    if words.len() < 4 {
        return None;
    }
    let gpu_index = words[0].1.parse::<u32>().ok()?;
    let is_id = |w: &str| w == "N/A" || w.parse::<u32>().is_ok();
    let pid_at = if words.len() >= 6
        && is_id(words[1].1)
        && is_id(words[2].1)
        && words[3].1.parse::<u32>().is_ok()
    {
        3
    } else {
        1
    };
    let pid = words.get(pid_at)?.1.parse::<u32>().ok()?;
    let kind = words.get(pid_at + 1)?;
    if !kind.1.chars().all(|c| matches!(c, 'C' | 'G' | 'M' | '+')) {
        return None;
    }
    let memory = words.last()?;
    let name_start = kind.0 + kind.1.len();
    let name_end = if memory.0 > name_start {
        memory.0
    } else {
        cell.len()
    };
    let name = cell
        .get(name_start..name_end)
        .unwrap_or("")
        .trim()
        .to_owned();
    Some(GpuProcess {
        gpu_index: Some(gpu_index),
        gpu_uuid: None,
        gpu_bus_id: None,
        pid,
        name,
        kind: Some(kind.1.to_owned()),
        used_memory_mib: match value::read(memory.1) {
            Reading::Value(v) if v.ends_with("MiB") => value::small(value::integer(v)),
            _ => None,
        },
    })
}

/// Each whitespace-separated word with its byte offset in `text`.
fn word_spans(text: &str) -> Vec<(usize, &str)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                spans.push((s, &text[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, &text[s..]));
    }
    spans
}

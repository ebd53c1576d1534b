//! Any bytes as nvidia-smi output: the reader must return a report, never panic.
#![no_main]

use leasehold_core::probe::{gpu, nvidia_smi};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let report = nvidia_smi::parse(&text);
    let _ = nvidia_smi::ContractReport::from(&report);
    let _ = nvidia_smi::parse_table(&text);
    let _ = nvidia_smi::parse_xml(&text);
    let _ = nvidia_smi::parse_compute_apps_csv(&text);
    // The three outputs the GPU probe merges, split at arbitrary points.
    let third = text.len() / 3;
    let (a, rest) = text.split_at(text.floor_char_boundary(third));
    let (b, c) = rest.split_at(rest.floor_char_boundary(third));
    let _ = gpu::merge(a, b, c);
});

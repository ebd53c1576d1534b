//! Any bytes as the output of every other probe: each parser returns a value or a typed error.
#![no_main]

use leasehold_core::probe::network::{default_endpoints, parse_timings};
use leasehold_core::probe::{disk, kernel_log, ollama, python, resources, sections, stress, system, torch};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = sections::split(&text);
    let _ = system::parse_os_release(&text);
    let _ = resources::parse_cpu_max(&text);
    let _ = disk::parse_df(&text);
    let _ = kernel_log::parse_dmesg(&text, Some(0));
    let _ = kernel_log::parse_dmesg(&text, Some(1));
    let _ = python::pip_index_url(&text);
    let _ = ollama::parse_ps(&text);
    let _ = ollama::split_processor(&text);
    let _ = torch::parse_output(&text);
    if let Ok(facts) = stress::parse_output(&text) {
        for run in facts.devices.iter().flat_map(|d| &d.runs) {
            let _ = (run.median(), run.slowdown(), run.spread());
        }
    }
    let _ = parse_timings(&text, &default_endpoints());
});

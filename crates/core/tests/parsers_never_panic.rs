//! Every parser of untrusted text returns a value (or a typed error) for any input: random
//! text, and real captures cut, spliced and corrupted. A bounded, stable-toolchain companion to
//! the cargo-fuzz targets in `fuzz/` (`make fuzz`).

use std::path::Path;

use leasehold_core::probe::network::{default_endpoints, parse_timings};
use leasehold_core::probe::{
    disk, gpu, kernel_log, nvidia_smi, ollama, python, resources, sections, stress, system, torch,
};
use proptest::prelude::*;

fn fixtures() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nvidia-smi");
    let mut texts: Vec<String> = std::fs::read_dir(dir)
        .expect("fixtures folder")
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().extension().is_none_or(|e| e != "md"))
        .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
        .collect();
    texts.sort();
    texts
}

fn every_parser(text: &str) {
    let report = nvidia_smi::parse(text);
    let _ = nvidia_smi::ContractReport::from(&report);
    let _ = gpu::merge(text, text, text);
    let _ = sections::split(text);
    let _ = system::parse_os_release(text);
    let _ = resources::parse_cpu_max(text);
    let _ = disk::parse_df(text);
    let _ = kernel_log::parse_dmesg(text, Some(0));
    let _ = python::pip_index_url(text);
    let _ = ollama::parse_ps(text);
    let _ = ollama::split_processor(text);
    let _ = torch::parse_output(text);
    if let Ok(facts) = stress::parse_output(text) {
        for run in facts.devices.iter().flat_map(|d| &d.runs) {
            let _ = (run.median(), run.slowdown(), run.spread());
        }
    }
    let _ = parse_timings(text, &default_endpoints());
}

/// Cut a capture somewhere, splice in junk, and keep what is valid UTF-8.
fn corrupt(text: &str, cut: usize, junk: &str, keep: usize) -> String {
    let bytes = text.as_bytes();
    let at = cut % (bytes.len() + 1);
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(junk.as_bytes());
    let rest = &bytes[at..];
    out.extend_from_slice(&rest[..keep % (rest.len() + 1)]);
    String::from_utf8_lossy(&out).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics_a_parser(text in "\\PC{0,400}") {
        every_parser(&text);
    }

    #[test]
    fn table_like_noise_never_panics_a_parser(
        lines in prop::collection::vec("[|+ 0-9A-Za-z:./%=,\\-\\[\\]!]{0,90}", 0..40)
    ) {
        every_parser(&lines.join("\n"));
    }

    #[test]
    fn corrupted_captures_never_panic_a_parser(
        which in 0usize..64,
        cut in any::<usize>(),
        junk in "[\\PC\n|,<>/]{0,40}",
        keep in any::<usize>(),
    ) {
        let texts = fixtures();
        let text = &texts[which % texts.len()];
        every_parser(&corrupt(text, cut, &junk, keep));
    }
}

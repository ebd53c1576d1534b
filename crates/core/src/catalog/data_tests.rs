//! The embedded data keeps its promises: it parses, every number has a known source, nothing
//! is out of range, and every GPU name in the shared nvidia-smi captures resolves.

use super::cuda::{cuda_families, cuda_toolkits};
use super::gpus::{find_gpu, find_gpu_with_memory, gpus};
use super::models::{find_model, model_presets};
use super::naming::NameKey;
use super::sourced::{source, sources, Sourced};
use super::torch_wheel::{releases, wheels};

fn assert_source(key: &str, what: &str) {
    assert!(
        source(key).is_some(),
        "{what} cites unknown source key {key:?}"
    );
}

fn check_number<T: Into<f64> + Copy>(gpu: &str, field: &str, value: &Option<Sourced<T>>) {
    if let Some(sourced) = value {
        let number: f64 = sourced.value.into();
        assert!(
            number.is_finite() && number > 0.0,
            "{gpu}.{field} = {number} is not a positive number"
        );
        assert_source(&sourced.source, &format!("{gpu}.{field}"));
    }
}

#[test]
fn every_catalog_number_names_a_known_source() {
    for gpu in gpus() {
        let id = gpu.id.as_str();
        check_number(id, "memory_gb", &gpu.memory_gb);
        check_number(id, "memory_bandwidth_gb_s", &gpu.memory_bandwidth_gb_s);
        check_number(id, "fp16_tensor_tflops", &gpu.fp16_tensor_tflops);
        check_number(id, "tdp_w", &gpu.tdp_w);
        if let Some(mib) = &gpu.memory_mib {
            assert!(mib.value > 0, "{id}.memory_mib is zero");
            assert_source(&mib.source, &format!("{id}.memory_mib"));
        }
        if let Some(cc) = &gpu.compute_capability {
            assert!(
                gpu.compute_capability().is_some(),
                "{id}: compute capability {:?} does not parse",
                cc.value
            );
            assert_source(&cc.source, &format!("{id}.compute_capability"));
        }
        if let Some(driver) = &gpu.min_driver {
            assert!(
                gpu.min_driver().is_some(),
                "{id}: min_driver {:?} does not parse",
                driver.value
            );
            assert_source(&driver.source, &format!("{id}.min_driver"));
        }
        if let Some(link) = &gpu.interconnect {
            assert!(link.generation > 0, "{id}: interconnect generation 0");
            assert_source(&link.source, &format!("{id}.interconnect"));
        }
    }
    for family in cuda_families() {
        assert_source(&family.source, &format!("CUDA {}.x family", family.major));
    }
    for toolkit in cuda_toolkits() {
        assert_source(&toolkit.source, &format!("CUDA {}", toolkit.version));
    }
    for wheel in wheels() {
        assert_eq!(
            wheel.arch_list.is_some(),
            wheel.arch_source.is_some(),
            "{}: an arch list and its source come together",
            wheel.tag
        );
        if let Some(key) = &wheel.arch_source {
            assert_source(key, &format!("wheel {}", wheel.tag));
        }
    }
    for release in releases() {
        assert_source(&release.source, &format!("PyTorch {}", release.torch));
    }
    for model in model_presets() {
        let key = model.source.as_deref().unwrap_or_default();
        assert_source(key, &format!("model {}", model.id));
    }
    for (key, src) in sources() {
        assert!(src.url.starts_with("http"), "source {key} has no URL");
        assert!(!src.title.trim().is_empty(), "source {key} has no title");
    }
}

#[test]
fn marketed_and_reported_memory_sizes_agree_where_both_are_known() {
    for gpu in gpus() {
        if let (Some(gb), Some(mib)) = (&gpu.memory_gb, &gpu.memory_mib) {
            let reported = f64::from(mib.value) / 1024.0;
            let ratio = reported / gb.value;
            assert!(
                (0.9..=1.05).contains(&ratio),
                "{}: {} MiB reported vs {} GB marketed looks like a typo",
                gpu.id,
                mib.value,
                gb.value
            );
        }
    }
}

#[test]
fn ids_and_names_are_unique_so_lookups_are_unambiguous() {
    let mut ids = std::collections::BTreeSet::new();
    let mut names = std::collections::BTreeMap::new();
    for gpu in gpus() {
        assert!(ids.insert(gpu.id.clone()), "duplicate id {}", gpu.id);
        for name in std::iter::once(&gpu.name).chain(&gpu.aliases) {
            let key = NameKey::new(name).tokens.join(" ");
            if let Some(other) = names.insert(key.clone(), gpu.id.clone()) {
                assert_eq!(
                    other, gpu.id,
                    "{name:?} ({key}) names both {other} and {}",
                    gpu.id
                );
            }
        }
    }
}

#[test]
fn the_issue_s_required_gpus_are_all_in_the_catalog() {
    let required = [
        "RTX 2080 Ti",
        "RTX 3090",
        "RTX 4090",
        "RTX 4090 D",
        "RTX 5090",
        "A10",
        "A100 40GB",
        "A100 80GB",
        "A800",
        "L4",
        "L20",
        "L40S",
        "RTX 6000 Ada",
        "H20",
        "H100 SXM",
        "H100 PCIe",
        "H200",
        "B200",
        "V100",
        "T4",
    ];
    for name in required {
        let gpu = find_gpu(name).unwrap_or_else(|| panic!("{name} is missing from the catalog"));
        assert!(
            gpu.compute_capability().is_some(),
            "{name}: compute capability missing"
        );
        assert!(gpu.usable_gib().is_some(), "{name}: memory size missing");
    }
}

#[test]
fn every_gpu_name_in_the_nvidia_smi_captures_resolves() {
    // (name as printed in shared/fixtures/nvidia-smi, memory.total MiB, expected catalog id)
    let printed = [
        ("NVIDIA GeForce RTX 4090", Some(24564), "rtx-4090"),
        ("NVIDIA GeForce RTX 5090", Some(32607), "rtx-5090"),
        ("NVIDIA GeForce RTX 3090", Some(24576), "rtx-3090"),
        ("NVIDIA GeForce RTX 3060", Some(12288), "rtx-3060"),
        ("NVIDIA GeForce RTX 3080", Some(10240), "rtx-3080"),
        (
            "NVIDIA GeForce RTX 4080 SUPER",
            Some(16376),
            "rtx-4080-super",
        ),
        (
            "NVIDIA GeForce RTX 2080 SUPER",
            Some(8192),
            "rtx-2080-super",
        ),
        ("GeForce RTX 2080 Ti", None, "rtx-2080-ti"),
        ("NVIDIA RTX A5000", Some(24564), "rtx-a5000"),
        (
            "NVIDIA RTX 4000 SFF Ada Generation",
            Some(20475),
            "rtx-4000-sff-ada",
        ),
        ("NVIDIA RTX 6000 Ada Gene...", Some(49140), "rtx-6000-ada"),
        (
            "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
            Some(97887),
            "rtx-pro-6000-blackwell-max-q",
        ),
        ("NVIDIA A100-SXM4-80GB", Some(81920), "a100-sxm4-80gb"),
        ("NVIDIA A10", Some(23028), "a10"),
        ("NVIDIA A10G", Some(23028), "a10g"),
        ("NVIDIA L4", Some(23034), "l4"),
        ("NVIDIA L40S", Some(46068), "l40s"),
        ("NVIDIA H100 80GB HBM3", Some(81559), "h100-sxm"),
        ("NVIDIA H100 NVL", Some(95830), "h100-nvl"),
        ("NVIDIA H200", Some(143771), "h200"),
        ("NVIDIA B200", Some(183359), "b200"),
        ("Tesla T4", Some(15360), "t4"),
        ("Tesla V100-SXM2-16GB", Some(16384), "v100-sxm2-16gb"),
        ("Tesla V100-PCIE...", Some(16160), "v100-pcie-16gb"),
        ("Tesla V100-PCIE-32GB", None, "v100-pcie-32gb"),
    ];
    for (name, mib, id) in printed {
        let found = find_gpu_with_memory(name, mib).map(|g| g.id.as_str());
        assert_eq!(found, Some(id), "nvidia-smi name {name:?}");
    }
}

#[test]
fn verify_gets_the_expected_peak_and_compute_capability_for_common_cards() {
    let h100 = find_gpu("NVIDIA H100 80GB HBM3").expect("H100 is in the catalog");
    assert_eq!(
        h100.fp16_tensor_tflops.as_ref().map(|t| t.value),
        Some(989.0)
    );
    assert_eq!(
        h100.compute_capability().map(|c| c.to_string()).as_deref(),
        Some("9.0")
    );
    let a100 = find_gpu("NVIDIA A100-SXM4-80GB").expect("A100 is in the catalog");
    assert_eq!(
        a100.fp16_tensor_tflops.as_ref().map(|t| t.value),
        Some(312.0)
    );
    let rtx5090 = find_gpu("NVIDIA GeForce RTX 5090").expect("5090 is in the catalog");
    assert_eq!(
        rtx5090
            .compute_capability()
            .map(|c| c.to_string())
            .as_deref(),
        Some("12.0")
    );
    assert!(
        rtx5090.fp16_tensor_tflops.is_none(),
        "the 5090's dense figure is unsourced, so empty"
    );
}

#[test]
fn unknown_names_find_nothing_rather_than_a_wrong_card() {
    for name in [
        "",
        "Radeon RX 7900 XTX",
        "NVIDIA GeForce GTX 1080",
        "Quadro RTX 6000",
        "RTX 2080",
    ] {
        assert!(
            find_gpu(name).is_none(),
            "{name:?} must not match a catalog card"
        );
    }
}

#[test]
fn model_presets_have_their_published_parameter_counts() {
    // Published totals: Qwen2.5 7B 7.61B, 14B 14.7B, 32B 32.5B, 72B 72.7B; Llama 3.1 8B 8.03B,
    // 70B 70.6B; DeepSeek-R1-Distill-Qwen-7B exactly 7,615,616,512.
    let expected = [
        ("qwen2.5-7b", 7.61),
        ("qwen2.5-14b", 14.7),
        ("qwen2.5-32b", 32.5),
        ("qwen2.5-72b", 72.7),
        ("llama3.1-8b", 8.03),
        ("llama3.1-70b", 70.6),
        ("deepseek-r1-distill-qwen-7b", 7.62),
        ("deepseek-r1-distill-qwen-14b", 14.7),
        ("deepseek-r1-distill-qwen-32b", 32.5),
    ];
    for (id, billions) in expected {
        let model = find_model(id).unwrap_or_else(|| panic!("preset {id} missing"));
        let got = model.params() as f64 / 1e9;
        assert!(
            (got - billions).abs() / billions < 0.01,
            "{id}: computed {got:.3}B, published {billions}B"
        );
    }
    let distill = find_model("deepseek-r1:7b").expect("ollama-style alias resolves");
    assert_eq!(
        distill.params(),
        7_615_616_512,
        "matches the checkpoint's parameter count exactly"
    );
}

#[test]
fn model_presets_resolve_from_the_spellings_people_use() {
    for name in [
        "qwen2.5-7b",
        "Qwen2.5-7B",
        "qwen2.5:7b",
        "Qwen/Qwen2.5-7B-Instruct",
    ] {
        assert_eq!(
            find_model(name).map(|m| m.id.as_str()),
            Some("qwen2.5-7b"),
            "{name}"
        );
    }
    assert_eq!(
        find_model("llama3.1:70b").map(|m| m.id.as_str()),
        Some("llama3.1-70b")
    );
    assert!(find_model("gpt-5").is_none());
}

proptest::proptest! {
    #[test]
    fn lookups_and_version_parsers_never_panic_on_any_text(text in "\\PC{0,40}") {
        let _ = find_gpu(&text);
        let _ = find_model(&text);
        let _ = text.parse::<super::version::DriverVersion>();
        let _ = super::version::parse_compute_capability(&text);
        let _ = super::version::MajorMinor::parse(&text);
    }

    #[test]
    fn nvidia_smi_like_names_never_panic(prefix in "(NVIDIA |Tesla |GeForce )?", body in "[A-Za-z0-9 -]{0,30}", cut in proptest::bool::ANY) {
        let name = format!("{prefix}{body}{}", if cut { "..." } else { "" });
        let _ = find_gpu_with_memory(&name, Some(24564));
    }
}

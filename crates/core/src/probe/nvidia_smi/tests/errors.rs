//! Failure texts and the JSON contract.

use super::*;

#[test]
fn each_error_text_maps_to_its_status() {
    let cases = [
        (
            "issue-lyulyul-shine50-couldnt-communicate-460.txt",
            NvidiaSmiStatus::DriverNotLoaded,
            None,
        ),
        (
            "issue-tinygrad-ogkm47-driver-library-mismatch-570.124.txt",
            NvidiaSmiStatus::DriverMismatch,
            Some("570.124"),
        ),
        (
            "issue-intel-llvm17614-driver-library-mismatch-550.144.txt",
            NvidiaSmiStatus::DriverMismatch,
            Some("550.144"),
        ),
        (
            "issue-ogkm862-rtx5090-no-devices-found.txt",
            NvidiaSmiStatus::NoDevices,
            None,
        ),
    ];
    for (file, status, nvml) in cases {
        let report = parse(&fixture(file));
        assert_eq!(report.status, status, "{file}");
        assert!(report.gpus.is_empty(), "{file}: no GPU can be listed");
        assert_eq!(
            report.nvml_library_version.as_deref(),
            nvml,
            "{file}: NVML version"
        );
        assert!(
            report.message.is_some(),
            "{file}: the failure line is kept as evidence"
        );
    }
    for text in [
        "bash: nvidia-smi: command not found",
        "sh: 1: nvidia-smi: not found",
        "zsh: command not found: nvidia-smi",
        "'nvidia-smi' is not recognized as an internal or external command,",
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system.",
    ] {
        assert_eq!(parse(text).status, NvidiaSmiStatus::NotInstalled, "{text}");
    }
    assert_eq!(parse("").status, NvidiaSmiStatus::Unrecognized);
    assert_eq!(parse("hello world").status, NvidiaSmiStatus::Unrecognized);
}

#[test]
fn a_gpu_whose_handle_fails_is_listed_in_error_state() {
    let report = parse(&fixture(
        "issue-ogkm387-rtx2080ti-520.61.05-unknown-error.txt",
    ));
    assert_eq!(report.status, NvidiaSmiStatus::Ok);
    assert_eq!(report.gpus.len(), 1);
    assert_eq!(report.gpus[0].state, GpuState::Error);
    assert_eq!(report.gpus[0].bus_id.as_deref(), Some("0000:0B:00.0"));
}

#[test]
fn contract_json_has_exactly_the_documented_keys() {
    let report = parse(&fixture(
        "nvidia_gpu_exporter-l40s-linux-595.80.table-load.txt",
    ));
    let json = serde_json::to_value(ContractReport::from(&report)).expect("serialises");
    let keys = |v: &serde_json::Value| -> Vec<String> {
        let mut k: Vec<String> = v
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        k.sort();
        k
    };
    assert_eq!(
        keys(&json),
        [
            "cuda_version",
            "driver_version",
            "gpus",
            "processes",
            "status"
        ]
    );
    assert_eq!(
        keys(&json["gpus"][0]),
        [
            "index",
            "memory_total_mib",
            "memory_used_mib",
            "name",
            "power_draw_w",
            "power_limit_w",
            "state",
            "temperature_c",
            "utilization_pct",
        ]
    );
    assert_eq!(
        keys(&json["processes"][0]),
        ["gpu_index", "name", "pid", "used_memory_mib"]
    );
    assert_eq!(json["status"], "ok");
    assert_eq!(json["gpus"][0]["power_limit_w"], serde_json::json!(350.0));
}

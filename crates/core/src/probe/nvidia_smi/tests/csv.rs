//! `--query-gpu` / `--query-compute-apps` CSV, with and without header and units.

use super::*;

#[test]
fn query_csv_with_header_and_units_reads_every_field_we_ask_for() {
    let file = "nvidia_gpu_exporter-l40s-linux-595.80.query-gpu-load.csv";
    let report = parse(&fixture(file));
    assert_eq!(report.status, NvidiaSmiStatus::Ok);
    assert_eq!(report.driver_version.as_deref(), Some("595.80"));
    assert_eq!(
        report.cuda_version, None,
        "--query-gpu does not print the CUDA version"
    );
    let gpu = &report.gpus[0];
    check_gpu(
        file,
        gpu,
        &ok(0, "NVIDIA L40S", 46068, 1235, Some(9), 54, 110.23, 350.0),
    );
    assert_eq!(gpu.compute_cap.as_deref(), Some("8.9"));
    assert_eq!(
        (gpu.pcie_gen_current, gpu.pcie_width_current),
        (Some(4), Some(16))
    );
    assert_eq!(gpu.clock_sm_mhz, Some(2520));
    assert_eq!(gpu.ecc_uncorrected_volatile, Some(0), "ECC is on and clean");

    let mig = parse(&fixture(
        "nvidia_gpu_exporter-h100-mig-linux-590.48.01.query-gpu-load.csv",
    ));
    assert_eq!(
        mig.gpus[0].utilization_pct, None,
        "MIG mode hides utilisation ([N/A])"
    );
    assert_eq!(mig.gpus[0].mig_enabled, Some(true));

    let kmd = parse(&fixture(
        "nvidia_gpu_exporter-geforce-rtx-2080-super-linux-610.57.04.query-gpu-load.csv",
    ));
    check_gpu(
        "2080S 610",
        &kmd.gpus[0],
        &ok(
            0,
            "NVIDIA GeForce RTX 2080 SUPER",
            8192,
            815,
            Some(8),
            38,
            98.14,
            250.0,
        ),
    );
    assert_eq!(kmd.gpus[0].compute_cap.as_deref(), Some("7.5"));
}

#[test]
fn compute_apps_csv_reads_pid_name_and_memory() {
    let report = parse(&fixture(
        "nvidia_gpu_exporter-h100-80gb-hbm3-linux-590.48.01.compute-apps-load.csv",
    ));
    assert_eq!(report.status, NvidiaSmiStatus::Ok);
    let pids: Vec<(u32, &str, Option<u32>)> = report
        .processes
        .iter()
        .map(|p| (p.pid, p.name.as_str(), p.used_memory_mib))
        .collect();
    assert_eq!(
        pids,
        vec![
            (11327, "/root/tools/memhog", Some(2566)),
            (11328, "/root/tools/memhog", Some(1542)),
            (11345, "./gpu_burn", Some(15690)),
        ]
    );
    assert_eq!(
        report.processes[0].gpu_index, None,
        "no GPU list in the file to map the UUID to"
    );
    assert_eq!(
        report.processes[0].gpu_bus_id.as_deref(),
        Some("00000000:00:09.0")
    );
}

#[test]
fn csv_without_units_with_unknown_error_marks_the_gpu_failed() {
    let file = "issue-mindminer627-rtx2080ti-442.19-unknown-error.csv";
    let report = parse(&fixture(file));
    assert_eq!(report.status, NvidiaSmiStatus::Ok);
    check_gpu(
        file,
        &report.gpus[0],
        &Expect {
            index: 0,
            name: "GeForce RTX 2080 Ti",
            total: None,
            used: None,
            util: Some(100),
            temp: Some(56),
            draw: Some(228.82),
            limit: Some(210.0),
            state: GpuState::Error,
        },
    );
    assert_eq!(
        report.gpus[0].failed_fields,
        vec!["power.default_limit".to_owned()]
    );
}

#[test]
fn headerless_csv_in_the_common_monitoring_layout_is_read_by_position() {
    let file = "issue-zabbix17-rtx3080-unknown-driver-NA.csv";
    let report = parse(&fixture(file));
    assert_eq!(report.status, NvidiaSmiStatus::Ok);
    let gpu = &report.gpus[0];
    assert_eq!(gpu.index, 0);
    assert_eq!(gpu.name.as_deref(), Some("NVIDIA GeForce RTX 3080"));
    assert_eq!(
        gpu.uuid.as_deref(),
        Some("GPU-8fe3a97d-51f6-a669-0d80-b4530b81b816")
    );
    assert_eq!(
        (gpu.memory_total_mib, gpu.memory_used_mib),
        (Some(10240), Some(1211)),
        "10240 = 9029 free + 1211 used"
    );
    assert_eq!(
        gpu.temperature_c,
        Some(54),
        "column 14 of the monitoring layout"
    );
    assert_eq!(gpu.utilization_pct, None, "[N/A]");
    assert_eq!(gpu.state, GpuState::Ok, "[N/A] is no reading, not an error");
}

#[test]
fn headerless_csv_of_unknown_layout_reads_only_self_identifying_columns() {
    let report = parse("3, NVIDIA GeForce RTX 4090, GPU-abc, 24564, 20000, 4564, 77");
    let gpu = &report.gpus[0];
    assert_eq!(
        (gpu.index, gpu.name.as_deref()),
        (3, Some("NVIDIA GeForce RTX 4090"))
    );
    assert_eq!(
        (gpu.memory_total_mib, gpu.memory_used_mib),
        (Some(24564), Some(4564))
    );
    assert_eq!(
        gpu.temperature_c, None,
        "77 could be anything without a header"
    );
    assert_eq!(
        parse("kernel: rm_init_adapter failed, device minor number 0").status,
        NvidiaSmiStatus::Unrecognized,
        "a comma alone does not make a GPU row"
    );
}

//! Every captured fixture parses to the values read off the capture by hand.

use super::*;

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/nvidia-smi")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("fixture {}: {err}", path.display()))
}

/// What a test expects of one GPU; `None` fields are not checked.
struct Expect {
    index: u32,
    name: &'static str,
    total: Option<u32>,
    used: Option<u32>,
    util: Option<u32>,
    temp: Option<i32>,
    draw: Option<f64>,
    limit: Option<f64>,
    state: GpuState,
}

fn check_gpu(file: &str, gpu: &GpuInfo, want: &Expect) {
    assert_eq!(gpu.index, want.index, "{file}: index");
    assert_eq!(
        gpu.name.as_deref(),
        Some(want.name),
        "{file}: name of GPU {}",
        want.index
    );
    assert_eq!(gpu.memory_total_mib, want.total, "{file}: memory.total");
    assert_eq!(gpu.memory_used_mib, want.used, "{file}: memory.used");
    assert_eq!(gpu.utilization_pct, want.util, "{file}: utilization");
    assert_eq!(gpu.temperature_c, want.temp, "{file}: temperature");
    assert_eq!(gpu.power_draw_w, want.draw, "{file}: power draw");
    assert_eq!(gpu.power_limit_w, want.limit, "{file}: power limit");
    assert_eq!(
        gpu.state, want.state,
        "{file}: state ({:?})",
        gpu.failed_fields
    );
}

#[allow(clippy::too_many_arguments)]
fn ok(
    index: u32,
    name: &'static str,
    total: u32,
    used: u32,
    util: Option<u32>,
    temp: i32,
    draw: f64,
    limit: f64,
) -> Expect {
    Expect {
        index,
        name,
        total: Some(total),
        used: Some(used),
        util,
        temp: Some(temp),
        draw: Some(draw),
        limit: Some(limit),
        state: GpuState::Ok,
    }
}

#[test]
fn plain_tables_of_every_layout_read_their_header_and_first_gpu() {
    // (file, driver, cuda, GPU count, first GPU, process count)
    let cases: Vec<(&str, &str, &str, usize, Expect, usize)> = vec![
        (
            "thamada-rtx4090-x8-550.127.05.txt",
            "550.127.05",
            "12.4",
            8,
            ok(
                0,
                "NVIDIA GeForce RTX 4090",
                24564,
                2,
                Some(0),
                28,
                20.0,
                450.0,
            ),
            0,
        ),
        (
            "thamada-gls-rtx5090-570.124.06.txt",
            "570.124.06",
            "12.8",
            1,
            ok(
                0,
                "NVIDIA GeForce RTX 5090",
                32607,
                2,
                Some(0),
                25,
                24.0,
                575.0,
            ),
            0,
        ),
        (
            "thamada-l40s-550.127.05.txt",
            "550.127.05",
            "12.4",
            1,
            ok(0, "NVIDIA L40S", 46068, 1, Some(0), 31, 33.0, 350.0),
            0,
        ),
        (
            "thamada-h100-sxm-80gb-x8-565.57.01.txt",
            "565.57.01",
            "12.7",
            8,
            ok(
                0,
                "NVIDIA H100 80GB HBM3",
                81559,
                1,
                Some(0),
                30,
                100.0,
                700.0,
            ),
            0,
        ),
        (
            "thamada-a100-sxm4-80gb-x4-555.42.02.txt",
            "555.42.02",
            "12.5",
            4,
            ok(
                0,
                "NVIDIA A100-SXM4-80GB",
                81920,
                1,
                Some(0),
                25,
                59.0,
                500.0,
            ),
            0,
        ),
        (
            "thamada-rtx3090-x2-560.35.03.txt",
            "560.35.03",
            "12.6",
            2,
            ok(
                0,
                "NVIDIA GeForce RTX 3090",
                24576,
                2,
                Some(0),
                30,
                30.0,
                350.0,
            ),
            0,
        ),
        (
            "thamada-h100-nvl-x2-550.54.14.txt",
            "550.54.14",
            "12.4",
            2,
            ok(0, "NVIDIA H100 NVL", 95830, 0, Some(0), 32, 61.0, 310.0),
            0,
        ),
        (
            "thamada-l4-550.90.07.txt",
            "550.90.07",
            "12.4",
            1,
            ok(0, "NVIDIA L4", 23034, 1, Some(0), 33, 16.0, 72.0),
            0,
        ),
        (
            "thamada-gls-v100-x8-550.127.05.txt",
            "550.127.05",
            "12.4",
            8,
            ok(
                0,
                "Tesla V100-SXM2-16GB",
                16384,
                1,
                Some(0),
                37,
                45.0,
                300.0,
            ),
            0,
        ),
        (
            "thamada-gls-a10-550.90.12.txt",
            "550.90.12",
            "12.4",
            1,
            ok(0, "NVIDIA A10", 23028, 1, Some(0), 33, 15.0, 150.0),
            0,
        ),
        (
            "thamada-gls-h200-550.90.12.txt",
            "550.90.12",
            "12.4",
            1,
            ok(0, "NVIDIA H200", 143771, 1, Some(0), 28, 74.0, 700.0),
            0,
        ),
        (
            "thamada-rtx6000-ada-x8-550.127.05.txt",
            "550.127.05",
            "12.4",
            8,
            ok(
                0,
                "NVIDIA RTX 6000 Ada Gene...",
                49140,
                2,
                Some(0),
                30,
                23.0,
                300.0,
            ),
            0,
        ),
        (
            "modal-gpu-glossary-b200-x8-575.57.08.txt",
            "580.95.05",
            "13.0",
            8,
            ok(0, "NVIDIA B200", 183359, 0, Some(0), 27, 136.0, 1000.0),
            0,
        ),
        (
            "nvidia_gpu_exporter-l40s-linux-595.80.table-load.txt",
            "595.80",
            "13.2",
            1,
            ok(0, "NVIDIA L40S", 46068, 1235, Some(9), 54, 110.0, 350.0),
            2,
        ),
        (
            "nvidia_gpu_exporter-geforce-rtx-2080-super-linux-610.57.04.table-load.txt",
            "610.57.04",
            "13.3",
            1,
            ok(
                0,
                "NVIDIA GeForce RTX 2080 ...",
                8192,
                815,
                Some(8),
                38,
                97.0,
                250.0,
            ),
            4,
        ),
        (
            "nvidia_gpu_exporter-geforce-rtx-2080-super-windows-591.86.table-load.txt",
            "591.86",
            "13.1",
            1,
            ok(
                0,
                "NVIDIA GeForce RTX 2080 ...",
                8192,
                1296,
                Some(7),
                45,
                97.0,
                250.0,
            ),
            12,
        ),
        (
            "nvidia_gpu_exporter-h100-mig-linux-590.48.01.table-load.txt",
            "590.48.01",
            "13.1",
            1,
            ok(
                0,
                "NVIDIA H100 80GB HBM3",
                81559,
                11125,
                None,
                52,
                432.0,
                700.0,
            ),
            3,
        ),
        (
            "nvidia_gpu_exporter-h200-mig-linux-590.48.01.table-load.txt",
            "590.48.01",
            "13.1",
            1,
            ok(0, "NVIDIA H200", 143771, 16959, None, 36, 295.0, 700.0),
            3,
        ),
    ];
    for (file, driver, cuda, count, first, processes) in cases {
        let report = parse(&fixture(file));
        assert_eq!(report.status, NvidiaSmiStatus::Ok, "{file}: status");
        assert_eq!(
            report.driver_version.as_deref(),
            Some(driver),
            "{file}: driver"
        );
        assert_eq!(report.cuda_version.as_deref(), Some(cuda), "{file}: CUDA");
        assert_eq!(report.gpus.len(), count, "{file}: GPU count");
        check_gpu(file, &report.gpus[0], &first);
        assert_eq!(report.processes.len(), processes, "{file}: processes");
        let indices: Vec<u32> = report.gpus.iter().map(|g| g.index).collect();
        let expected: Vec<u32> = (0..u32::try_from(count).unwrap_or(0)).collect();
        assert_eq!(indices, expected, "{file}: GPUs keep their table order");
    }
}

#[test]
fn the_last_gpu_of_a_multi_gpu_table_is_read_from_its_own_rows() {
    let report = parse(&fixture("thamada-rtx4090-x8-550.127.05.txt"));
    let last = &report.gpus[7];
    check_gpu(
        "rtx4090 x8",
        last,
        &ok(
            7,
            "NVIDIA GeForce RTX 4090",
            24564,
            2,
            Some(0),
            25,
            19.0,
            450.0,
        ),
    );
    assert_eq!(last.bus_id.as_deref(), Some("00000000:E1:00.0"));
}

#[test]
fn truncated_names_are_flagged() {
    let report = parse(&fixture("thamada-rtx6000-ada-x8-550.127.05.txt"));
    assert!(report.gpus[0].name_truncated, "`Gene...` is a cut name");
    let full = parse(&fixture("thamada-l40s-550.127.05.txt"));
    assert!(!full.gpus[0].name_truncated);
}

#[test]
fn table_processes_carry_gpu_pid_kind_and_memory() {
    let report = parse(&fixture(
        "nvidia_gpu_exporter-h100-80gb-hbm3-linux-590.48.01.table-load.txt",
    ));
    let burn = report
        .processes
        .iter()
        .find(|p| p.pid == 11345)
        .expect("gpu_burn row");
    assert_eq!(burn.gpu_index, Some(0));
    assert_eq!(burn.name, "./gpu_burn");
    assert_eq!(burn.kind.as_deref(), Some("C"));
    assert_eq!(burn.used_memory_mib, Some(15690));
    assert_eq!(
        report.gpus[0].mig_enabled,
        Some(false),
        "third row says Disabled"
    );

    let windows = parse(&fixture(
        "nvidia_gpu_exporter-geforce-rtx-2080-super-windows-591.86.table-load.txt",
    ));
    let dwm = windows
        .processes
        .iter()
        .find(|p| p.pid == 2056)
        .expect("dwm row");
    assert_eq!(dwm.name, r"C:\Windows\System32\dwm.exe");
    assert_eq!(dwm.kind.as_deref(), Some("C+G"));
    assert_eq!(dwm.used_memory_mib, None, "WDDM reports N/A per process");
}

#[test]
fn mig_tables_list_their_slices_and_keep_processes_on_the_parent_gpu() {
    let report = parse(&fixture(
        "nvidia_gpu_exporter-h200-mig-linux-590.48.01.table-load.txt",
    ));
    assert_eq!(report.gpus[0].mig_enabled, Some(true));
    assert_eq!(report.mig_devices.len(), 5);
    let first = &report.mig_devices[0];
    assert_eq!(
        (first.gpu_instance, first.compute_instance, first.mig_index),
        (Some(2), Some(0), Some(0))
    );
    assert_eq!(
        (first.memory_used_mib, first.memory_total_mib),
        (Some(16925), Some(71424))
    );
    let burn = report
        .processes
        .iter()
        .find(|p| p.pid == 12267)
        .expect("gpu_burn");
    assert_eq!(
        (burn.gpu_index, burn.used_memory_mib),
        (Some(0), Some(13526))
    );
}

#[test]
fn old_layout_fragment_with_err_power_is_a_gpu_in_error_state() {
    let file = "issue-azhpc-diagnostics77-v100-pcie-ERR-power-unknown-driver.txt";
    let report = parse(&fixture(file));
    assert_eq!(report.status, NvidiaSmiStatus::Ok);
    assert_eq!(report.driver_version, None, "the fragment has no header");
    assert_eq!(report.gpus.len(), 1);
    let gpu = &report.gpus[0];
    check_gpu(
        file,
        gpu,
        &Expect {
            index: 1,
            name: "Tesla V100-PCIE...",
            total: Some(16160),
            used: Some(593),
            util: Some(0),
            temp: Some(29),
            draw: None,
            limit: Some(250.0),
            state: GpuState::Error,
        },
    );
    assert_eq!(gpu.failed_fields, vec!["power_draw".to_owned()]);
}

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
fn xml_reports_of_every_schema_read_gpu_fields_and_processes() {
    // (file, driver, cuda, GPU count, first GPU, process count)
    let cases: Vec<(&str, &str, &str, usize, Expect, usize)> = vec![
        (
            "telegraf-tesla-t4-515.105.01.xml",
            "515.105.01",
            "11.7",
            1,
            ok(0, "Tesla T4", 15360, 1032, Some(0), 40, 26.78, 70.0),
            2,
        ),
        (
            "telegraf-a10g-515.105.01.xml",
            "515.105.01",
            "11.7",
            1,
            ok(0, "NVIDIA A10G", 23028, 22, Some(0), 17, 25.58, 300.0),
            1,
        ),
        (
            "telegraf-rtx3090-525.147.05.xml",
            "525.147.05",
            "12.0",
            1,
            ok(
                0,
                "NVIDIA GeForce RTX 3090",
                24576,
                1,
                Some(0),
                37,
                27.23,
                200.0,
            ),
            0,
        ),
        (
            "telegraf-a100-sxm4-80gb-x4-535.54.03.xml",
            "535.54.03",
            "12.2",
            1,
            ok(
                0,
                "NVIDIA A100-SXM4-80GB",
                81920,
                50,
                None,
                27,
                67.03,
                500.0,
            ),
            0,
        ),
        (
            "telegraf-rtx3060-570.124.04.xml",
            "570.124.04",
            "12.8",
            1,
            ok(
                0,
                "NVIDIA GeForce RTX 3060",
                12288,
                116,
                Some(0),
                42,
                11.63,
                170.0,
            ),
            0,
        ),
        (
            "telegraf-rtx3090-590.44.01.xml",
            "590.44.01",
            "13.1",
            1,
            ok(
                0,
                "NVIDIA GeForce RTX 3090",
                24576,
                7,
                Some(0),
                32,
                35.15,
                350.0,
            ),
            0,
        ),
        (
            "telegraf-rtx3080-595.58.03.xml",
            "595.58.03",
            "13.2",
            1,
            ok(
                0,
                "NVIDIA GeForce RTX 3080",
                10240,
                9184,
                Some(65),
                27,
                142.33,
                320.0,
            ),
            0,
        ),
        (
            "telegraf-rtx4000-sff-ada-595.84.xml",
            "595.84",
            "13.2",
            1,
            ok(
                0,
                "NVIDIA RTX 4000 SFF Ada Generation",
                20475,
                3534,
                Some(0),
                38,
                8.44,
                70.0,
            ),
            4,
        ),
        (
            "telegraf-rtx-pro-6000-blackwell-maxq-590.44.01.xml",
            "590.44.01",
            "13.1",
            1,
            ok(
                0,
                "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
                97887,
                65720,
                Some(0),
                24,
                3.99,
                300.0,
            ),
            1,
        ),
        (
            "telegraf-rtx-a5000-x2-590.44.01.xml",
            "590.44.01",
            "13.1",
            2,
            ok(
                0,
                "NVIDIA RTX A5000",
                24564,
                22437,
                Some(0),
                13,
                6.52,
                230.0,
            ),
            2,
        ),
    ];
    for (file, driver, cuda, count, first, processes) in cases {
        let report = parse(&fixture(file));
        assert_eq!(report.status, NvidiaSmiStatus::Ok, "{file}: status");
        assert_eq!(
            report.driver_version.as_deref(),
            Some(driver),
            "{file}: driver"
        );
        assert_eq!(report.cuda_version.as_deref(), Some(cuda), "{file}: CUDA");
        assert_eq!(report.gpus.len(), count, "{file}: GPU count");
        check_gpu(file, &report.gpus[0], &first);
        assert_eq!(report.processes.len(), processes, "{file}: processes");
    }
}

#[test]
fn xml_keeps_mig_slices_out_of_the_parent_memory_and_reads_link_and_ecc() {
    let report = parse(&fixture("telegraf-a100-sxm4-80gb-x4-535.54.03.xml"));
    assert_eq!(report.gpus[0].mig_enabled, Some(true));
    assert_eq!(
        report.gpus[0].memory_total_mib,
        Some(81920),
        "not a 19968 MiB slice"
    );
    let t4 = parse(&fixture("telegraf-tesla-t4-515.105.01.xml"));
    let gpu = &t4.gpus[0];
    assert_eq!(
        (
            gpu.pcie_gen_current,
            gpu.pcie_width_current,
            gpu.pcie_width_max
        ),
        (Some(3), Some(8), Some(16))
    );
    assert_eq!(
        (gpu.ecc_uncorrected_volatile, gpu.ecc_corrected_volatile),
        (Some(0), Some(0))
    );
    let python = t4
        .processes
        .iter()
        .find(|p| p.pid == 5762)
        .expect("python process");
    assert_eq!(
        (
            python.name.as_str(),
            python.used_memory_mib,
            python.gpu_index
        ),
        ("python", Some(1005), Some(0))
    );
    let second = parse(&fixture("telegraf-rtx-a5000-x2-590.44.01.xml"));
    assert_eq!(
        second.gpus[1].memory_used_mib,
        Some(17253),
        "second <gpu> is index 1"
    );
    assert_eq!(second.processes[1].gpu_index, Some(1));
}

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

//! Plain tables: both layouts, the 610 header, truncated names, MIG and process blocks.

use super::*;

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

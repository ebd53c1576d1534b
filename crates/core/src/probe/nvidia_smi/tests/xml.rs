//! `-q -x` XML of every schema in the captures.

use super::*;

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

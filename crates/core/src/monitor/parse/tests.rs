use super::*;
use crate::monitor::fields::QueryFields;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("../../../tests/fixtures/nvidia-smi/", $name))
    };
}

/// A capture's header and first row, read the way the sampler reads its own stream.
fn capture_reading(text: &str) -> GpuReading {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let fields = QueryFields::from_header(lines.next().expect("header"));
    let row = lines.next().expect("a row");
    parse_gpu_line(&fields, row).expect("a GPU line").0
}

#[test]
fn a_loaded_h100_capture_reads_every_metric_with_units_left_on() {
    let gpu = capture_reading(fixture!(
        "nvidia_gpu_exporter-h100-80gb-hbm3-linux-590.48.01.query-gpu-load.csv"
    ));
    assert_eq!(gpu.index, 0);
    assert_eq!(gpu.utilization_pct, Some(100));
    assert_eq!(gpu.memory_used_mib, Some(19818));
    assert_eq!(gpu.memory_total_mib, Some(81559));
    assert_eq!(gpu.temperature_c, Some(59));
    assert_eq!(gpu.power_draw_w, Some(631.95));
    assert_eq!(gpu.power_limit_w, Some(700.0));
    assert_eq!(gpu.sm_clock_mhz, Some(1980));
    assert!(
        gpu.throttle.is_empty(),
        "0x0 means no clock limit is active"
    );
}

#[test]
fn a_mig_gpu_without_utilisation_says_none_rather_than_zero() {
    let gpu = capture_reading(fixture!(
        "nvidia_gpu_exporter-h100-mig-linux-590.48.01.query-gpu-load.csv"
    ));
    assert_eq!(gpu.utilization_pct, None, "[N/A] is unknown, not idle");
    assert_eq!(gpu.memory_used_mib, Some(11125));
}

#[test]
fn an_idle_windows_card_reports_only_the_idle_reason_which_is_not_a_throttle() {
    let gpu = capture_reading(fixture!(
        "nvidia_gpu_exporter-geforce-rtx-2080-super-windows-591.86.query-gpu-load.csv"
    ));
    assert_eq!(gpu.utilization_pct, Some(7));
    assert!(gpu.throttle.is_empty(), "0x1 (GPU idle) is not a problem");
}

#[test]
fn placeholders_become_none_and_the_event_mask_is_decoded() {
    let fields = QueryFields::default();
    let line = "3, 8, GPU-abc, [N/A], 1024, 81920, [Not Supported], ERR!, [Unknown Error], 210, 0x0000000000000044";
    let (gpu, count) = parse_gpu_line(&fields, line).expect("a GPU line");
    assert_eq!(gpu.index, 3);
    assert_eq!(count, Some(8));
    assert_eq!(gpu.uuid.as_deref(), Some("GPU-abc"));
    assert_eq!(gpu.utilization_pct, None);
    assert_eq!(gpu.temperature_c, None);
    assert_eq!(gpu.power_draw_w, None);
    assert_eq!(gpu.power_limit_w, None);
    assert_eq!(gpu.sm_clock_mhz, Some(210));
    assert_eq!(
        gpu.throttle,
        vec![ThrottleReason::PowerCap, ThrottleReason::HwThermal]
    );
}

#[test]
fn garbage_lines_are_skipped_never_read_as_gpus() {
    let fields = QueryFields::default();
    for line in [
        "",
        "Field \"clocks_event_reasons.active\" is not a valid field to query.",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
        "-1, 8, GPU-x, 5, 1, 2, 3, 4, 5, 6, 0x0",
        "x, 8, GPU-x, 5, 1, 2, 3, 4, 5, 6, 0x0",
        "0, 8, GPU-x, 5",
        "\u{0}\u{fffd}, , , , , , , , , , ",
        "99999999999999999999999, 8, GPU-x, 5, 1, 2, 3, 4, 5, 6, 0x0",
    ] {
        assert!(
            parse_gpu_line(&fields, line).is_none(),
            "{line:?} is not a GPU line"
        );
    }
    let (gpu, _) = parse_gpu_line(&fields, "0, 8, GPU-x, 250, -5, inf, NaN, 1e400, 5, 6, 0xZZ")
        .expect("the index alone makes it a GPU line");
    assert_eq!(
        gpu.utilization_pct, None,
        "above 100 % is not a utilisation"
    );
    assert_eq!(gpu.memory_used_mib, None, "negative is not a size");
    assert_eq!(gpu.memory_total_mib, None);
    assert_eq!(gpu.temperature_c, None);
    assert_eq!(gpu.power_draw_w, None);
    assert!(gpu.throttle.is_empty());
}

#[test]
fn every_captured_line_goes_through_the_parser_without_panicking() {
    let fields = QueryFields::default();
    let captures = [
        fixture!("nvidia_gpu_exporter-h100-80gb-hbm3-linux-590.48.01.query-gpu-load.csv"),
        fixture!("issue-zabbix17-rtx3080-unknown-driver-NA.csv"),
        fixture!("issue-mindminer627-rtx2080ti-442.19-unknown-error.csv"),
        fixture!("thamada-h100-sxm-80gb-x8-565.57.01.txt"),
        fixture!("issue-lyulyul-shine50-couldnt-communicate-460.txt"),
    ];
    for text in captures {
        let header_fields = QueryFields::from_header(text.lines().next().unwrap_or(""));
        let mut assembler = SampleAssembler::default();
        for line in text.lines() {
            let _ = parse_gpu_line(&fields, line);
            let _ = parse_gpu_line(&header_fields, line);
            let _ = assembler.push(&fields, line);
            let _ = parse_process_line(line);
        }
    }
}

fn line(index: u32, count: Option<u32>) -> String {
    let count = count.map_or("[N/A]".to_owned(), |c| c.to_string());
    format!("{index}, {count}, GPU-{index}, 50, 1000, 81920, 40, 300.5, 400.00, 1410, 0x0")
}

#[test]
fn a_sample_is_handed_on_when_its_last_gpu_arrives() {
    let fields = QueryFields::default();
    let mut assembler = SampleAssembler::default();
    for index in 0..7 {
        assert!(assembler.push(&fields, &line(index, Some(8))).is_none());
    }
    let sample = assembler
        .push(&fields, &line(7, Some(8)))
        .expect("the eighth line completes the sample");
    assert_eq!(sample.len(), 8);
    assert!(assembler.take().is_none(), "nothing is left over");
}

#[test]
fn without_a_count_a_sample_ends_when_an_index_comes_round_again() {
    let fields = QueryFields::default();
    let mut assembler = SampleAssembler::default();
    assert!(assembler.push(&fields, &line(0, None)).is_none());
    assert!(assembler.push(&fields, &line(1, None)).is_none());
    let first = assembler
        .push(&fields, &line(0, None))
        .expect("GPU 0 again");
    assert_eq!(
        first.iter().map(|g| g.index).collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert_eq!(assembler.take().map(|g| g.len()), Some(1));
}

#[test]
fn process_rows_from_a_capture_group_by_their_timestamp() {
    // The capture's columns are timestamp, gpu_name, gpu_bus_id, gpu_serial, gpu_uuid, pid,
    // process_name, used_gpu_memory; the sampler asks for timestamp, gpu_uuid, pid,
    // process_name, used_gpu_memory, so pick those.
    let text = fixture!("nvidia_gpu_exporter-h100-80gb-hbm3-linux-590.48.01.compute-apps-load.csv");
    let mut assembler = ProcessAssembler::default();
    let mut looks = Vec::new();
    for row in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let c: Vec<&str> = row.split(", ").collect();
        let ours = format!("{}, {}, {}, {}, {}", c[0], c[4], c[5], c[6], c[7]);
        looks.extend(assembler.push(&ours));
    }
    assert!(looks.is_empty(), "all rows share one timestamp");
    let look = assembler.take().expect("one look");
    assert_eq!(look.len(), 3);
    assert_eq!(look[0].pid, 11327);
    assert_eq!(look[0].name, "/root/tools/memhog");
    assert_eq!(look[0].used_memory_mib, Some(2566));
    assert_eq!(look[2].name, "./gpu_burn");
    let next = assembler.push("2026/07/14 08:12:58.500, GPU-0, 1, python, 10");
    assert!(next.is_none(), "taken looks are not handed on twice");
}

#[test]
fn processes_are_matched_to_gpus_by_uuid() {
    let fields = QueryFields::default();
    let gpus = vec![
        parse_gpu_line(&fields, &line(0, Some(2))).expect("gpu").0,
        parse_gpu_line(&fields, &line(1, Some(2))).expect("gpu").0,
    ];
    let (_, process) =
        parse_process_line("2026/07/14 08:12:53.500, GPU-1, 42, python train.py, 1000")
            .expect("row");
    let mut processes = vec![process];
    attach_gpu_indexes(&mut processes, &gpus);
    assert_eq!(processes[0].gpu_index, Some(1));
}

use super::*;

const CAPTURED: &[u8] = include_bytes!("../../../tests/fixtures/backup/scan-autodl.bin");

fn autodl() -> StorageLayout {
    StorageLayout {
        data_disk: Some("/root/autodl-tmp".into()),
        file_storage: Some("/root/autodl-fs".into()),
    }
}

#[test]
fn a_captured_scan_reads_into_repos_weights_changes_and_disks() {
    let report = parse_scan(CAPTURED, &autodl());
    assert!(report.complete, "the end marker was read");
    assert_eq!(report.home.as_deref(), Some("/root"));
    let repos: Vec<(&str, bool, u32, u32)> = report
        .repos
        .iter()
        .map(|r| {
            (
                r.path.as_str(),
                r.has_remote,
                r.unpushed_commits,
                r.uncommitted_files,
            )
        })
        .collect();
    assert_eq!(
        repos,
        vec![
            ("/root/autodl-tmp/lora", true, 2, 0),
            ("/root/clean", true, 0, 0),
            ("/root/notes", false, 3, 2),
        ]
    );
    let lora = &report.repos[0];
    assert_eq!(
        lora.disk,
        DiskKind::DataDisk,
        "under the provider's data disk"
    );
    assert_eq!(report.repos[1].disk, DiskKind::System);
    assert_eq!(report.repos[2].untracked_files, 1);
    assert_eq!(report.repos[2].stashes, 1);
    // The checkpoint folder replaces the weight files inside it; largest first.
    let weights: Vec<(&str, u64, bool)> = report
        .weights
        .iter()
        .map(|w| (w.path.as_str(), w.bytes, w.folder))
        .collect();
    assert_eq!(
        weights,
        vec![
            ("/root/autodl-tmp/out/checkpoint-500", 52_428_800, true),
            ("/root/autodl-tmp/model.safetensors", 10_485_760, false),
            ("/root/notes/tiny.pt", 2048, false),
        ]
    );
    let changed = report.changed_since_last_backup.expect("a backup existed");
    assert_eq!((changed.files, changed.bytes), (14, 62_918_656));
    assert_eq!(changed.newest.map(|t| t.timestamp()), Some(1_764_590_000));
    assert_eq!(report.gpu_processes.len(), 1);
    assert_eq!(report.gpu_processes[0].pid, 4242);
    assert_eq!(
        report.gpu_processes[0].cwd.as_deref(),
        Some("/root/autodl-tmp/lora")
    );
    let disks: Vec<(&str, DiskKind)> = report
        .disks
        .iter()
        .map(|d| (d.mount.as_str(), d.kind))
        .collect();
    assert_eq!(
        disks,
        vec![
            ("/", DiskKind::System),
            ("/root/autodl-tmp", DiskKind::DataDisk)
        ]
    );
    let envs: Vec<(&str, &str)> = report
        .environments
        .iter()
        .map(|e| (e.kind.as_str(), e.name.as_str()))
        .collect();
    assert_eq!(
        envs,
        vec![("conda", "base"), ("conda", "train"), ("pip", "python3")]
    );
}

#[test]
fn a_cut_output_is_incomplete_and_keeps_what_arrived() {
    let cut = &CAPTURED[..CAPTURED.len() / 2];
    let report = parse_scan(cut, &autodl());
    assert!(!report.complete, "no end marker");
}

#[test]
fn hostile_and_malformed_records_are_skipped_not_fatal() {
    let mut hostile = Vec::new();
    for record in [
        "G\tnot-a-number\t\u{0}",
        "G\t1\tx\ty\tz\tw\tmain\t/root/ok",
        "W\t-5\t1\t/root/neg.bin",
        "W\t99999999999999999999999\t1\t/big.bin",
        "W\t10\tnot-a-time\t/root/a.pt",
        "C\t\t",
        "N\t1\t2",
        "D\tgarbage",
        "E\tconda\t",
        "E\tpip\tNaN\t/usr/bin/python3",
        "P\tx\t/tmp",
        "A\tnot csv at all",
        "T\tunknown\t3",
        "\t\t\t",
        "Z\tunknown kind",
    ] {
        hostile.extend_from_slice(record.as_bytes());
        hostile.push(0);
    }
    hostile.extend_from_slice(&[0xff, 0xfe, b'\t', 0]);
    hostile.extend_from_slice(b"X\tend\0");
    let report = parse_scan(&hostile, &StorageLayout::default());
    assert!(report.complete);
    assert_eq!(
        report.repos.len(),
        1,
        "only the record with a path: {:?}",
        report.repos
    );
    assert_eq!(
        report.repos[0].unpushed_commits, 0,
        "a nonsense count reads as zero"
    );
    let paths: Vec<&str> = report.weights.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        vec!["/root/a.pt"],
        "only the weight with a real size"
    );
    assert!(report.weights[0].modified.is_none());
    assert!(
        report.changed_since_last_backup.is_none(),
        "a short N record is ignored"
    );
    assert_eq!(report.environments.len(), 1);
    assert_eq!(report.environments[0].packages, None);
}

#[test]
fn endless_output_is_capped() {
    let mut flood = Vec::new();
    for n in 0..(MAX_WEIGHTS + 500) {
        flood.extend_from_slice(format!("W\t{n}\t1\t/w/{n}.bin\0").as_bytes());
    }
    let report = parse_scan(&flood, &StorageLayout::default());
    assert_eq!(report.weights.len(), MAX_WEIGHTS);
}

proptest::proptest! {
    #[test]
    fn any_bytes_parse_without_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4096)) {
        let _ = parse_scan(&bytes, &autodl());
    }
}

//! Rules as a whole: silence on a healthy machine, both languages, ordering, the run diff.

use super::*;

#[test]
fn a_healthy_machine_has_no_findings() {
    assert_eq!(
        codes(&healthy(), &en()),
        Vec::<String>::new(),
        "every rule must stay silent on a healthy 4090"
    );
}

#[test]
fn every_finding_has_text_in_both_languages_and_a_fix() {
    let mut facts = healthy();
    facts.gpu = Some(gpu_facts("bash: nvidia-smi: command not found"));
    if let Some(g) = facts.gpu.as_mut() {
        g.nvidia_smi_found_at.clear();
    }
    for lang in [Lang::En, Lang::ZhCn] {
        for finding in diagnose(&facts, &DiagnoseContext::new(lang)) {
            assert!(
                !finding.title.is_empty() && !finding.detail.is_empty(),
                "{} lacks text in {lang:?}",
                finding.code
            );
            assert!(!finding.fix.is_empty(), "{} gives no fix", finding.code);
            assert!(
                !finding.evidence.is_empty(),
                "{} shows no evidence",
                finding.code
            );
        }
    }
    let zh = diagnose(&facts, &DiagnoseContext::new(Lang::ZhCn));
    assert!(
        zh[0]
            .title
            .chars()
            .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
        "zh-CN text is Chinese"
    );
}

#[test]
fn findings_come_errors_first() {
    let mut facts = healthy();
    facts.network = Some(NetworkFacts {
        endpoints: default_endpoints()
            .iter()
            .map(|e| timing(&e.id, e.kind, None))
            .collect(),
        ..NetworkFacts::default()
    });
    facts.gpu = Some(gpu_facts("No devices were found"));
    let severities: Vec<Severity> = diagnose(&facts, &en())
        .into_iter()
        .map(|f| f.severity)
        .collect();
    let mut sorted = severities.clone();
    sorted.sort();
    assert_eq!(severities, sorted);
    assert_eq!(severities.first(), Some(&Severity::Error));
}

#[test]
fn status_ok_with_no_gpu_is_not_mistaken_for_a_driver_failure() {
    let mut facts = healthy();
    if let Some(g) = facts.gpu.as_mut() {
        g.nvidia_smi.status = NvidiaSmiStatus::Ok;
    }
    assert!(codes(&facts, &en()).is_empty());
}

#[test]
fn the_diff_shows_new_and_resolved_findings_and_real_fact_changes_only() {
    let before = healthy();
    let before_findings = diagnose(&before, &en());
    let mut after = healthy();
    if let Some(g) = after.gpu.as_mut() {
        {
            g.nvidia_smi.driver_version = Some("570.124.06".into());
            g.nvidia_smi.gpus[0].temperature_c = Some(80);
        };
    }
    after.disks = Some(vec![DiskUsage {
        paths: vec!["/".into()],
        mount: "/".into(),
        filesystem: "overlay".into(),
        size_mib: 30 * 1024,
        used_mib: 30 * 1024 - 300,
        available_mib: 300,
    }]);
    let after_findings = diagnose(&after, &en());
    let d = diff::diff_runs((&before, &before_findings), (&after, &after_findings));
    assert_eq!(
        d.new_findings
            .iter()
            .map(|f| f.code.as_str())
            .collect::<Vec<_>>(),
        vec!["disk.low"]
    );
    assert!(d.resolved_findings.is_empty());
    let paths: Vec<&str> = d.changed_facts.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        vec!["gpu.nvidia_smi.driver_version"],
        "temperature and free space are readings, not changes"
    );
    let back = diff::diff_runs((&after, &after_findings), (&before, &before_findings));
    assert_eq!(back.resolved_findings.len(), 1);
    assert!(diff::diff_runs((&before, &before_findings), (&before, &before_findings)).is_empty());
}

#[test]
fn when_no_wheel_fits_the_driver_the_fix_says_so_instead_of_naming_one() {
    let mut facts = healthy();
    facts.gpu = Some(gpu_facts(&fixture("thamada-gls-rtx5090-570.124.06.txt")));
    if let Some(g) = facts.gpu.as_mut() {
        g.nvidia_smi.driver_version = Some("550.127.05".into());
    }
    facts.torch = Some(TorchFacts {
        devices: vec![TorchDevice {
            name: "NVIDIA GeForce RTX 5090".into(),
            capability: "12.0".into(),
            total_memory_mib: None,
        }],
        ..healthy_torch()
    });
    let finding = find(&facts, "torch.arch_unsupported");
    assert!(
        finding
            .fix
            .iter()
            .any(|s| s.command.is_none() && s.text.starts_with("No PyTorch wheel")),
        "a 550 driver cannot run any wheel with sm_120: {:?}",
        finding.fix
    );
}

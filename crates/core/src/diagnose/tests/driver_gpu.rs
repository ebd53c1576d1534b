//! Driver failures and GPU states: missing, not loaded, no devices, mismatch, ERR!, Xid, busy, count.

use super::*;

#[test]
fn missing_nvidia_smi_is_driver_not_installed_or_a_path_problem() {
    let mut facts = healthy();
    let mut gpu = gpu_facts("bash: nvidia-smi: command not found");
    gpu.nvidia_smi_found_at.clear();
    gpu.kernel_modules.clear();
    facts.gpu = Some(gpu.clone());
    let finding = find(&facts, "driver.not_installed");
    assert_eq!(finding.severity, Severity::Error);
    assert!(
        finding
            .fix
            .iter()
            .any(|s| s.command.as_deref() == Some("lsmod | grep nvidia")),
        "the seed's first check"
    );
    assert!(finding
        .evidence
        .iter()
        .any(|e| e.contains("command not found")));

    gpu.nvidia_smi_found_at = vec!["/usr/local/nvidia/bin/nvidia-smi".into()];
    facts.gpu = Some(gpu);
    let path = find(&facts, "driver.not_installed");
    assert!(
        path.title.contains("not on PATH"),
        "binary present elsewhere → PATH advice: {}",
        path.title
    );
    assert!(path.fix.iter().any(|s| s
        .command
        .as_deref()
        .is_some_and(|c| c.contains("/usr/local/nvidia/bin"))));
}

#[test]
fn driver_failures_map_to_their_codes() {
    let cases = [
        (
            "issue-lyulyul-shine50-couldnt-communicate-460.txt",
            "driver.not_loaded",
        ),
        (
            "issue-ogkm862-rtx5090-no-devices-found.txt",
            "driver.no_devices",
        ),
        (
            "issue-tinygrad-ogkm47-driver-library-mismatch-570.124.txt",
            "driver.version_mismatch",
        ),
    ];
    for (file, code) in cases {
        let mut facts = healthy();
        facts.gpu = Some(gpu_facts(&fixture(file)));
        let found = codes(&facts, &en());
        assert!(
            found.contains(&code.to_owned()),
            "{file} → {code}, got {found:?}"
        );
        assert!(
            !found
                .iter()
                .any(|c| c == "gpu.busy" || c == "gpu.error_state"),
            "{file}: no GPU rules without GPUs"
        );
    }
}

#[test]
fn no_devices_after_rm_init_failure_points_at_the_driver_being_too_old_and_recreating() {
    let mut facts = healthy();
    if let Some(s) = facts.system.as_mut() {
        s.container = Some("docker".into());
    }
    facts.gpu = Some(gpu_facts("No devices were found"));
    facts.kernel_log = Some(parse_dmesg(
        "[5.0] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:884)",
        Some(0),
    ));
    let finding = find(&facts, "driver.no_devices");
    assert!(
        finding.detail.contains("too old"),
        "RmInitAdapter → driver too old: {}",
        finding.detail
    );
    assert!(
        finding.fix.iter().any(|s| s.text.contains("preinstalled")),
        "prefer re-creating from an image with the driver"
    );
    assert!(finding.evidence.iter().any(|e| e.contains("RmInitAdapter")));
}

#[test]
fn err_fields_make_gpu_error_state() {
    let mut facts = healthy();
    facts.gpu = Some(gpu_facts(&fixture(
        "issue-azhpc-diagnostics77-v100-pcie-ERR-power-unknown-driver.txt",
    )));
    let finding = find(&facts, "gpu.error_state");
    assert!(finding.title.contains("GPU 1"));
    assert!(finding.evidence.iter().any(|e| e.contains("power_draw")));
}

#[test]
fn xid_79_is_an_error_with_its_meaning_and_xid_13_a_warning() {
    let mut facts = healthy();
    facts.kernel_log = Some(parse_dmesg(
        "NVRM: Xid (PCI:0000:01:00): 79, pid=0, GPU has fallen off the bus.\nNVRM: Xid (PCI:0000:01:00): 13, pid=99, name=python, Graphics Exception",
        Some(0),
    ));
    let findings = diagnose(&facts, &en());
    let xid79 = findings
        .iter()
        .find(|f| f.code == "gpu.xid" && f.title.contains("79"))
        .expect("Xid 79 reported");
    assert_eq!(xid79.severity, Severity::Error);
    assert!(xid79.detail.contains("fallen off the bus"));
    let xid13 = findings
        .iter()
        .find(|f| f.code == "gpu.xid" && f.title.contains("13"))
        .expect("Xid 13 reported");
    assert_eq!(xid13.severity, Severity::Warning);
    let mut denied = healthy();
    denied.kernel_log = Some(KernelLogFacts {
        access: crate::probe::kernel_log::KernelLogAccess::Denied,
        xid_events: vec![],
        nvrm_errors: vec![],
        message: Some("Operation not permitted".into()),
    });
    assert!(
        !codes(&denied, &en()).contains(&"gpu.xid".to_owned()),
        "a denied dmesg is not a GPU error"
    );
}

fn hold_memory(facts: &mut Facts, used: u32, util: u32, pid: u32, state: Option<ProcessState>) {
    let gpu = facts.gpu.as_mut().expect("gpu facts");
    gpu.nvidia_smi.gpus[0].memory_used_mib = Some(used);
    gpu.nvidia_smi.gpus[0].utilization_pct = Some(util);
    gpu.nvidia_smi.processes.push(GpuProcess {
        gpu_index: Some(0),
        gpu_uuid: None,
        gpu_bus_id: None,
        pid,
        name: "python".into(),
        kind: Some("C".into()),
        used_memory_mib: Some(used - 10),
    });
    gpu.process_states.extend(state);
}

#[test]
fn a_zombie_holding_memory_at_zero_utilisation_is_gpu_busy() {
    let mut facts = healthy();
    hold_memory(
        &mut facts,
        18_000,
        0,
        4242,
        Some(ProcessState {
            pid: 4242,
            visible: true,
            state: Some("Z".into()),
        }),
    );
    let finding = find(&facts, "gpu.busy");
    assert!(finding.detail.contains("zombies"), "{}", finding.detail);
    assert!(finding
        .fix
        .iter()
        .any(|s| s.command.as_deref() == Some("kill -9 4242")));
    assert!(finding.evidence.iter().any(|e| e.contains("[state Z]")));

    let mut invisible = healthy();
    if let Some(g) = invisible.gpu.as_mut() {
        g.nvidia_smi.gpus[0].memory_used_mib = Some(20_000);
    }
    if let Some(g) = invisible.gpu.as_mut() {
        g.nvidia_smi.gpus[0].utilization_pct = Some(0);
    }
    let finding = find(&invisible, "gpu.busy");
    assert!(
        finding
            .fix
            .iter()
            .any(|s| s.text.contains("restart the instance")),
        "memory held from outside the container"
    );

    let mut light = healthy();
    hold_memory(&mut light, 500, 0, 77, None);
    assert!(
        !codes(&light, &en()).contains(&"gpu.busy".to_owned()),
        "a desktop's few hundred MiB is not busy"
    );
}

#[test]
fn fewer_gpus_than_rented_is_count_mismatch() {
    let facts = healthy();
    let mut context = en();
    context.expected_gpu_count = Some(2);
    assert!(codes(&facts, &context).contains(&"gpu.count_mismatch".to_owned()));
    context.expected_gpu_count = Some(1);
    assert!(!codes(&facts, &context).contains(&"gpu.count_mismatch".to_owned()));
}

#[test]
fn starved_cpu_and_memory_are_reported() {
    let mut facts = healthy();
    facts.resources = Some(ResourceFacts {
        cpus_online: Some(64),
        cpus_host: Some(64),
        cpu_quota_cores: Some(2.0),
        memory_host_mib: Some(512 * 1024),
        memory_limit_mib: Some(16 * 1024),
        ..ResourceFacts::default()
    });
    let cpu = find(&facts, "cpu.starved");
    assert!(
        cpu.title.contains('2'),
        "the quota, not the host's 64: {}",
        cpu.title
    );
    let memory = find(&facts, "memory.starved");
    assert!(
        memory.detail.contains("smaller than the GPUs' memory"),
        "16 GiB RAM < 24 GiB VRAM"
    );

    let mut no_gpu = healthy();
    if let Some(s) = no_gpu.system.as_mut() {
        s.container = Some("docker".into());
    }
    no_gpu.gpu = Some(gpu_facts("bash: nvidia-smi: command not found"));
    no_gpu.resources = Some(ResourceFacts {
        cpus_online: Some(64),
        cpu_quota_cores: Some(0.5),
        memory_host_mib: Some(512 * 1024),
        memory_limit_mib: Some(2048),
        ..ResourceFacts::default()
    });
    let cpu = find(&no_gpu, "cpu.starved");
    assert!(
        cpu.detail.contains("no-GPU mode"),
        "half a core and no GPU is no-GPU mode: {}",
        cpu.detail
    );
    assert!(codes(&no_gpu, &en()).contains(&"memory.starved".to_owned()));
}

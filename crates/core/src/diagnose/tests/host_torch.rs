//! CPU, memory and disk; Python and PyTorch (CPU build, driver too old, arch, kernel launch).

use super::*;

#[test]
fn a_nearly_full_system_disk_is_disk_low() {
    let mut facts = healthy();
    facts.disks = Some(vec![DiskUsage {
        paths: vec!["/".into()],
        mount: "/".into(),
        filesystem: "overlay".into(),
        size_mib: 30 * 1024,
        used_mib: 29 * 1024 + 700,
        available_mib: 324,
    }]);
    let finding = find(&facts, "disk.low");
    assert_eq!(finding.severity, Severity::Error, "under 1 GiB free");
    assert!(finding.fix.iter().any(|s| s
        .command
        .as_deref()
        .is_some_and(|c| c.contains("autodl-tmp"))));
}

#[test]
fn no_python_is_python_missing_and_no_torch_is_torch_missing() {
    let mut facts = healthy();
    facts.python = Some(PythonFacts::default());
    facts.torch = Some(TorchFacts {
        python_missing: true,
        ..TorchFacts::default()
    });
    assert_eq!(codes(&facts, &en()), vec!["python.missing"]);

    let mut facts = healthy();
    facts.torch = Some(TorchFacts {
        python: Some("/usr/bin/python3".into()),
        import_error: Some("ModuleNotFoundError: No module named 'torch'".into()),
        ..TorchFacts::default()
    });
    let finding = find(&facts, "torch.missing");
    assert_eq!(finding.severity, Severity::Info);
}

#[test]
fn a_cpu_wheel_on_a_gpu_machine_is_torch_cpu_build_but_fine_without_a_gpu() {
    let mut facts = healthy();
    facts.torch = Some(TorchFacts {
        version: Some("2.3.0+cpu".into()),
        cuda_build: None,
        available: Some(false),
        device_count: Some(0),
        ..TorchFacts::default()
    });
    let finding = find(&facts, "torch.cpu_build");
    assert!(finding.evidence.iter().any(|e| e.contains("2.3.0+cpu")));
    facts.gpu = Some(gpu_facts("bash: nvidia-smi: command not found"));
    assert!(
        !codes(&facts, &en()).contains(&"torch.cpu_build".to_owned()),
        "a CPU build is right on a CPU machine"
    );
}

#[test]
fn a_cu128_wheel_on_a_cuda_12_4_driver_is_fine_but_cu128_on_cuda_11_is_driver_too_old() {
    let mut facts = healthy();
    facts.torch = Some(TorchFacts {
        version: Some("2.7.0+cu128".into()),
        cuda_build: Some("12.8".into()),
        ..healthy_torch()
    });
    assert!(
        !codes(&facts, &en()).contains(&"torch.driver_too_old".to_owned()),
        "minor-version compatibility within 12.x"
    );
    if let Some(g) = facts.gpu.as_mut() {
        g.nvidia_smi.cuda_version = Some("11.4".into());
        g.nvidia_smi.driver_version = Some("470.57.02".into());
    }
    facts.torch = Some(TorchFacts {
        available: Some(false),
        warnings: vec!["CUDA initialization: The NVIDIA driver on your system is too old (found version 11040).".into()],
        kernel: None,
        ..facts.torch.clone().expect("torch")
    });
    let finding = find(&facts, "torch.driver_too_old");
    assert!(finding
        .evidence
        .iter()
        .any(|e| e.contains("too old (found version 11040)")));
    assert!(
        !codes(&facts, &en()).contains(&"torch.cuda_unavailable".to_owned()),
        "the specific cause replaces the generic one"
    );
}

#[test]
fn rtx5090_with_a_cu124_wheel_is_arch_unsupported_naming_cu128() {
    let mut facts = healthy();
    facts.gpu = Some(gpu_facts(&fixture("thamada-gls-rtx5090-570.124.06.txt")));
    facts.torch = Some(TorchFacts {
        devices: vec![TorchDevice { name: "NVIDIA GeForce RTX 5090".into(), capability: "12.0".into(), total_memory_mib: Some(32111) }],
        kernel: Some(KernelCheck { ok: false, error: Some("RuntimeError: CUDA error: no kernel image is available for execution on the device".into()) }),
        warnings: vec!["NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.".into()],
        ..healthy_torch()
    });
    let found = codes(&facts, &en());
    assert!(
        found.contains(&"torch.arch_unsupported".to_owned()),
        "{found:?}"
    );
    assert!(
        !found.contains(&"torch.kernel_failed".to_owned()),
        "the arch explains the failed launch"
    );
    let finding = find(&facts, "torch.arch_unsupported");
    assert!(finding.title.contains("sm_120"));
    assert!(finding
        .fix
        .iter()
        .any(|s| s.command.as_deref().is_some_and(|c| c.contains("cu128"))));
}

#[test]
fn sm_89_runs_sm_86_code_and_ptx_covers_newer_arches() {
    let mut facts = healthy();
    facts.torch = Some(TorchFacts {
        arch_list: ["sm_80", "sm_86"].map(String::from).to_vec(),
        ..healthy_torch()
    });
    assert!(
        !codes(&facts, &en()).contains(&"torch.arch_unsupported".to_owned()),
        "sm_86 binaries run on sm_89"
    );
    facts.torch = Some(TorchFacts {
        devices: vec![TorchDevice {
            name: "NVIDIA GeForce RTX 5090".into(),
            capability: "12.0".into(),
            total_memory_mib: None,
        }],
        arch_list: ["sm_90", "compute_90"].map(String::from).to_vec(),
        ..healthy_torch()
    });
    assert!(
        !codes(&facts, &en()).contains(&"torch.arch_unsupported".to_owned()),
        "PTX for 9.0 JIT-compiles for 12.0"
    );
}

#[test]
fn a_failed_launch_without_an_arch_reason_is_torch_kernel_failed() {
    let mut facts = healthy();
    facts.torch = Some(TorchFacts {
        kernel: Some(KernelCheck {
            ok: false,
            error: Some(
                "RuntimeError: CUDA error: an illegal memory access was encountered".into(),
            ),
        }),
        ..healthy_torch()
    });
    let finding = find(&facts, "torch.kernel_failed");
    assert!(finding
        .evidence
        .iter()
        .any(|e| e.contains("illegal memory access")));
}

#[test]
fn cuda_false_with_a_broken_driver_points_back_to_nvidia_smi() {
    let mut facts = healthy();
    facts.gpu = Some(gpu_facts(&fixture(
        "issue-lyulyul-shine50-couldnt-communicate-460.txt",
    )));
    facts.torch = Some(TorchFacts {
        available: Some(false),
        device_count: Some(0),
        devices: vec![],
        kernel: None,
        ..healthy_torch()
    });
    let found = codes(&facts, &en());
    assert!(
        found.contains(&"driver.not_loaded".to_owned())
            && found.contains(&"torch.cuda_unavailable".to_owned()),
        "{found:?}"
    );
    let finding = find(&facts, "torch.cuda_unavailable");
    assert!(finding.detail.contains("driver itself is not working"));
}

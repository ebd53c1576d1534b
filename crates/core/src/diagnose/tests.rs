//! Each rule against a healthy baseline (must stay silent) and against the symptom it exists
//! for (must speak, with the right code and evidence).

use chrono::TimeZone;

use super::*;
use crate::probe::disk::DiskUsage;
use crate::probe::docker::DockerFacts;
use crate::probe::gpu::{GpuFacts, ProcessState};
use crate::probe::kernel_log::{parse_dmesg, KernelLogFacts};
use crate::probe::network::{default_endpoints, EndpointKind, EndpointTiming, NetworkFacts};
use crate::probe::nvidia_smi::{self, GpuProcess, NvidiaSmiStatus};
use crate::probe::ollama::{parse_ps, OllamaFacts};
use crate::probe::python::PythonFacts;
use crate::probe::resources::ResourceFacts;
use crate::probe::stress::{StressDevice, StressFacts, StressRun};
use crate::probe::system::SystemFacts;
use crate::probe::torch::{KernelCheck, TorchDevice, TorchFacts};

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/nvidia-smi")
        .join(name);
    std::fs::read_to_string(path).expect("fixture")
}

fn gpu_facts(nvidia_smi_text: &str) -> GpuFacts {
    GpuFacts {
        nvidia_smi: nvidia_smi::parse(nvidia_smi_text),
        nvidia_smi_path: Some("/usr/bin/nvidia-smi".into()),
        nvidia_smi_found_at: vec!["/usr/bin/nvidia-smi".into()],
        kernel_modules: vec!["nvidia".into(), "nvidia_uvm".into()],
        kernel_module_version: Some(
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.127.05".into(),
        ),
        device_nodes: vec!["/dev/nvidia0".into(), "/dev/nvidiactl".into()],
        process_states: Vec::new(),
    }
}

fn healthy_torch() -> TorchFacts {
    TorchFacts {
        python: Some("/root/miniconda3/bin/python3".into()),
        python_version: Some("3.10.14".into()),
        version: Some("2.5.1+cu124".into()),
        cuda_build: Some("12.4".into()),
        available: Some(true),
        device_count: Some(1),
        devices: vec![TorchDevice {
            name: "NVIDIA GeForce RTX 4090".into(),
            capability: "8.9".into(),
            total_memory_mib: Some(24210),
        }],
        arch_list: [
            "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90",
        ]
        .map(String::from)
        .to_vec(),
        kernel: Some(KernelCheck {
            ok: true,
            error: None,
        }),
        ..TorchFacts::default()
    }
}

fn timing(id: &str, kind: EndpointKind, seconds: Option<f64>) -> EndpointTiming {
    EndpointTiming {
        id: id.into(),
        kind,
        url: default_endpoints()
            .into_iter()
            .find(|e| e.id == id)
            .map_or_else(|| format!("https://{id}"), |e| e.url),
        reachable: seconds.is_some(),
        http_status: seconds.map(|_| 200),
        seconds,
        error: seconds.is_none().then(|| "curl: (28) timed out".to_owned()),
    }
}

fn fast_network() -> NetworkFacts {
    NetworkFacts {
        endpoints: default_endpoints()
            .iter()
            .map(|e| timing(&e.id, e.kind, Some(0.3)))
            .collect(),
        network_turbo: false,
        curl_missing: false,
    }
}

/// A single-4090 VM that is fine in every respect.
fn healthy() -> Facts {
    let mut facts = Facts::empty(
        "test host",
        chrono::Utc
            .with_ymd_and_hms(2026, 11, 29, 12, 0, 0)
            .single()
            .expect("valid time"),
    );
    facts.system = Some(SystemFacts {
        os_name: Some("Ubuntu 22.04.3 LTS".into()),
        virtualization: Some("kvm".into()),
        ..SystemFacts::default()
    });
    facts.resources = Some(ResourceFacts {
        cpus_online: Some(16),
        cpus_host: Some(16),
        memory_host_mib: Some(64 * 1024),
        ..ResourceFacts::default()
    });
    facts.disks = Some(vec![DiskUsage {
        paths: vec!["/".into()],
        mount: "/".into(),
        filesystem: "overlay".into(),
        size_mib: 30 * 1024,
        used_mib: 10 * 1024,
        available_mib: 20 * 1024,
    }]);
    facts.kernel_log = Some(parse_dmesg("", Some(0)));
    // One GPU of the 8×4090 capture: the table's first block.
    let table = fixture("thamada-rtx4090-x8-550.127.05.txt");
    let mut gpu = gpu_facts(&table);
    gpu.nvidia_smi.gpus.truncate(1);
    facts.gpu = Some(gpu);
    facts.python = Some(PythonFacts {
        python3_path: Some("/usr/bin/python3".into()),
        python3_version: Some("3.10.14".into()),
        ..PythonFacts::default()
    });
    facts.torch = Some(healthy_torch());
    facts.docker = Some(DockerFacts::default());
    facts.ollama = Some(OllamaFacts::default());
    facts.network = Some(fast_network());
    facts
}

fn en() -> DiagnoseContext {
    DiagnoseContext::new(Lang::En)
}

fn codes(facts: &Facts, context: &DiagnoseContext) -> Vec<String> {
    diagnose(facts, context)
        .into_iter()
        .map(|f| f.code)
        .collect()
}

fn find(facts: &Facts, code: &str) -> Finding {
    diagnose(facts, &en())
        .into_iter()
        .find(|f| f.code == code)
        .unwrap_or_else(|| panic!("expected {code}, got {:?}", codes(facts, &en())))
}

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

#[test]
fn docker_rules_tell_a_container_from_a_missing_runtime() {
    let mut container = healthy();
    if let Some(s) = container.system.as_mut() {
        s.container = Some("docker".into());
    }
    container.docker = Some(DockerFacts {
        path: Some("/usr/bin/docker".into()),
        daemon_error: Some("Cannot connect to the Docker daemon".into()),
        ..DockerFacts::default()
    });
    assert!(codes(&container, &en()).contains(&"docker.impossible_in_container".to_owned()));

    let mut vm = healthy();
    vm.docker = Some(DockerFacts {
        path: Some("/usr/bin/docker".into()),
        daemon_reachable: true,
        runtimes: vec!["runc".into()],
        ..DockerFacts::default()
    });
    let finding = find(&vm, "docker.no_gpu_runtime");
    assert!(finding.fix.iter().any(|s| s
        .command
        .as_deref()
        .is_some_and(|c| c.contains("nvidia-ctk runtime configure"))));
    if let Some(d) = vm.docker.as_mut() {
        d.runtimes.push("nvidia".into());
    }
    assert!(!codes(&vm, &en()).contains(&"docker.no_gpu_runtime".to_owned()));
}

#[test]
fn ollama_spilling_to_cpu_is_cpu_offload() {
    let mut facts = healthy();
    facts.ollama = Some(OllamaFacts {
        path: Some("/usr/local/bin/ollama".into()),
        server_running: true,
        models: parse_ps("NAME          ID      SIZE     PROCESSOR          UNTIL\nllama3.1:70b  abc     42 GB    48%/52% CPU/GPU    Forever\nqwen2.5:7b    def     4.9 GB   100% GPU           Forever"),
        ..OllamaFacts::default()
    });
    let findings: Vec<Finding> = diagnose(&facts, &en())
        .into_iter()
        .filter(|f| f.code == "ollama.cpu_offload")
        .collect();
    assert_eq!(findings.len(), 1, "only the model that spills");
    assert!(findings[0].title.contains("llama3.1:70b"));
    assert!(findings[0].fix.iter().any(|s| s
        .command
        .as_deref()
        .is_some_and(|c| c.contains("OLLAMA_CONTEXT_LENGTH"))));
}

#[test]
fn slow_pypi_with_a_fast_mirror_suggests_the_mirror_unless_configured() {
    let mut facts = healthy();
    let mut network = fast_network();
    for e in &mut network.endpoints {
        match e.id.as_str() {
            "pypi" => *e = timing("pypi", EndpointKind::Pypi, Some(4.5)),
            "huggingface" => *e = timing("huggingface", EndpointKind::HuggingFace, None),
            "tuna" => *e = timing("tuna", EndpointKind::PypiMirror, Some(0.05)),
            _ => {}
        }
    }
    facts.network = Some(network);
    let finding = find(&facts, "network.slow_mirror");
    let commands: Vec<&str> = finding
        .fix
        .iter()
        .filter_map(|s| s.command.as_deref())
        .collect();
    assert!(
        commands
            .contains(&"pip config set global.index-url https://pypi.tuna.tsinghua.edu.cn/simple"),
        "{commands:?}"
    );
    assert!(commands.contains(&"export HF_ENDPOINT=https://hf-mirror.com"));
    if let Some(p) = facts.python.as_mut() {
        p.pip_index_url = Some("https://mirrors.aliyun.com/pypi/simple/".into());
    }
    let finding = find(&facts, "network.slow_mirror");
    assert!(
        !finding.fix.iter().any(|s| s
            .command
            .as_deref()
            .is_some_and(|c| c.starts_with("pip config"))),
        "pip already uses a mirror"
    );
}

#[test]
fn nothing_reachable_is_network_offline() {
    let mut facts = healthy();
    facts.network = Some(NetworkFacts {
        endpoints: default_endpoints()
            .iter()
            .map(|e| timing(&e.id, e.kind, None))
            .collect(),
        ..NetworkFacts::default()
    });
    assert_eq!(codes(&facts, &en()), vec!["network.offline"]);
}

fn stress_run(tflops: Vec<f64>, error: Option<&str>) -> StressFacts {
    StressFacts {
        size: Some(8192),
        error: None,
        devices: vec![StressDevice {
            index: 0,
            name: "NVIDIA GeForce RTX 4090".into(),
            runs: vec![StressRun {
                dtype: "float16".into(),
                tflops,
                error: error.map(str::to_owned),
            }],
        }],
    }
}

#[test]
fn stress_errors_and_throttling_are_reported_and_steady_runs_are_not() {
    let mut facts = healthy();
    facts.stress = Some(stress_run(vec![150.0; 12], None));
    assert!(
        codes(&facts, &en()).is_empty(),
        "a steady run near the 4090's peak is fine"
    );
    facts.stress = Some(stress_run(vec![60.0; 12], None));
    let slow = find(&facts, "gpu.underperforming");
    assert!(
        slow.evidence.iter().any(|e| e.contains("catalog peak")),
        "measured against the catalog: {:?}",
        slow.evidence
    );
    facts.stress = Some(stress_run(
        vec![
            160.0, 160.0, 158.0, 150.0, 140.0, 120.0, 110.0, 100.0, 100.0,
        ],
        None,
    ));
    assert!(codes(&facts, &en()).contains(&"gpu.underperforming".to_owned()));
    facts.stress = Some(stress_run(
        vec![],
        Some("RuntimeError: CUDA error: an illegal memory access was encountered"),
    ));
    let finding = find(&facts, "gpu.stress_failed");
    assert!(
        finding.detail.contains("provider"),
        "the seed: take it to the platform, not the code"
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

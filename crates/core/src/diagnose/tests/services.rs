//! Docker, Ollama, the network and the stress test.

use super::*;

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

/// Issue #13, item 14: the provider preset says what the machine is, and the rule believes it
/// over an ambiguous probe.
#[test]
fn docker_rule_takes_container_or_vm_from_the_provider_preset() {
    use crate::billing::{MachineKind, ProviderKey};
    let unreachable = DockerFacts {
        path: Some("/usr/bin/docker".into()),
        daemon_error: Some(
            "Cannot connect to the Docker daemon at unix:///var/run/docker.sock".into(),
        ),
        ..DockerFacts::default()
    };
    // The probe saw no container marker (ambiguous), the preset says container: impossible.
    let mut ambiguous = healthy();
    if let Some(s) = ambiguous.system.as_mut() {
        s.container = None;
        s.container_evidence.clear();
    }
    ambiguous.docker = Some(unreachable.clone());
    let autodl = DiagnoseContext {
        machine: ProviderKey::Autodl.preset().machine,
        ..en()
    };
    assert_eq!(autodl.machine, Some(MachineKind::Container));
    let finding = find_with(&ambiguous, &autodl, "docker.impossible_in_container");
    assert!(
        finding
            .evidence
            .iter()
            .any(|e| e.contains("provider preset")),
        "says the verdict rests on the preset: {:?}",
        finding.evidence
    );
    assert!(
        !codes(&ambiguous, &en()).contains(&"docker.impossible_in_container".to_owned()),
        "without the preset the probe alone decides, and it saw no container"
    );

    // The probe thinks it is a container (an overlay root on a VM), the preset says VM: Docker
    // is possible there, only not running.
    let mut overlay_vm = healthy();
    if let Some(s) = overlay_vm.system.as_mut() {
        s.container = Some("container".into());
        s.container_evidence = vec!["overlay root filesystem".into()];
    }
    overlay_vm.docker = Some(unreachable);
    let aliyun = DiagnoseContext {
        machine: ProviderKey::Aliyun.preset().machine,
        ..en()
    };
    assert_eq!(aliyun.machine, Some(MachineKind::VirtualMachine));
    let vm_codes = codes(&overlay_vm, &aliyun);
    assert!(
        !vm_codes.contains(&"docker.impossible_in_container".to_owned()),
        "a VM by the preset is never told Docker is impossible: {vm_codes:?}"
    );
    let down = find_with(&overlay_vm, &aliyun, "docker.daemon_not_running");
    assert!(down
        .fix
        .iter()
        .any(|s| s.command.as_deref() == Some("sudo systemctl enable --now docker")));
    assert!(
        codes(&overlay_vm, &en()).contains(&"docker.impossible_in_container".to_owned()),
        "without the preset the probe's container verdict stands"
    );
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

#[test]
fn unreachable_mirrors_beside_reachable_origins_are_a_warning_not_a_tick() {
    let mut facts = healthy();
    let mut network = fast_network();
    for e in &mut network.endpoints {
        if matches!(
            e.kind,
            EndpointKind::PypiMirror | EndpointKind::HuggingFaceMirror
        ) {
            *e = timing(&e.id.clone(), e.kind, None);
        }
    }
    facts.network = Some(network);
    let finding = find(&facts, "network.mirrors_unreachable");
    assert_eq!(finding.severity, Severity::Warning);
    assert!(
        finding
            .evidence
            .iter()
            .all(|line| line.contains("unreachable")),
        "the evidence lists the dead mirrors: {:?}",
        finding.evidence
    );
    assert!(
        codes(&healthy(), &en()).is_empty(),
        "reachable mirrors say nothing"
    );
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

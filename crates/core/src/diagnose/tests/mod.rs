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

mod driver_gpu;
mod general;
mod host_torch;
mod services;

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

fn find_with(facts: &Facts, context: &DiagnoseContext, code: &str) -> Finding {
    diagnose(facts, context)
        .into_iter()
        .find(|f| f.code == code)
        .unwrap_or_else(|| panic!("expected {code}, got {:?}", codes(facts, context)))
}

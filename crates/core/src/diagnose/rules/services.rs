//! Docker (and its GPU runtime) and Ollama.

use super::{driver_works, gpus};
use crate::billing::MachineKind;
use crate::diagnose::text::draft;
use crate::diagnose::{DiagnoseContext, Finding, Severity};
use crate::probe::docker::DockerFacts;
use crate::probe::ollama::LoadedModel;
use crate::probe::Facts;

pub(super) fn check(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let mut findings = Vec::new();
    findings.extend(docker(facts, context));
    findings.extend(ollama(facts, context));
    findings
}

fn docker(facts: &Facts, context: &DiagnoseContext) -> Option<Finding> {
    let docker = facts.docker.as_ref()?;
    let lang = context.lang;
    if context.is_container(facts) && !docker.daemon_reachable {
        let container = facts
            .system
            .as_ref()
            .and_then(|s| s.container.clone())
            .unwrap_or_else(|| "not detected by the probe".to_owned());
        return Some(
            draft(lang, "docker.impossible_in_container", Severity::Info)
                .title("这台实例本身是容器，里面跑不了 Docker", "This instance is itself a container; Docker cannot run inside it")
                .detail(
                    "容器实例没有运行 Docker 守护进程所需的权限，教程里的“docker run --gpus all”在这里走不通。直接用 conda/pip 装环境即可；确实需要 Docker 时，租虚拟机或物理机类型的实例。",
                    "A container instance lacks the privileges the Docker daemon needs, so guides that use `docker run --gpus all` do not work here. Set up with conda/pip instead; if you really need Docker, rent a VM or bare-metal instance.",
                )
                .run("用 conda 建环境代替镜像：", "Use a conda environment instead of an image:", "conda create -n work python=3.10 -y && conda activate work")
                .evidence(format!("container: {container}"))
                .when(context.machine == Some(MachineKind::Container), |d| {
                    d.evidence("provider preset: container instances")
                })
                .evidence_all(facts.system.iter().flat_map(|s| s.container_evidence.clone()))
                .evidence(docker.daemon_error.clone().unwrap_or_else(|| if docker.installed() { String::new() } else { "docker: not installed".to_owned() }))
                .build(),
        );
    }
    if !docker.daemon_reachable {
        // A machine of its own (a VM by the preset, or no container seen): Docker can run here,
        // it is just not running yet.
        return docker.installed().then(|| daemon_down(docker, context));
    }
    if docker.has_gpu_runtime() || !driver_works(facts) {
        return None;
    }
    Some(
        draft(lang, "docker.no_gpu_runtime", Severity::Warning)
            .title("Docker 还不能使用 GPU", "Docker cannot use the GPUs yet")
            .detail(
                "Docker 默认不把 GPU 交给容器，需要安装 NVIDIA Container Toolkit 并注册 nvidia 运行时，否则容器里看不到显卡。",
                "Docker does not pass GPUs to containers by default: install the NVIDIA Container Toolkit and register its runtime, or containers will see no GPU.",
            )
            .run(
                "添加 NVIDIA 的软件源（Ubuntu）：",
                "Add NVIDIA's package repository (Ubuntu):",
                "curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | sudo gpg --dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg && curl -s -L https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list | sed 's#deb https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://#g' | sudo tee /etc/apt/sources.list.d/nvidia-container-toolkit.list",
            )
            .run(
                "安装并注册运行时，重启 Docker：",
                "Install it, register the runtime and restart Docker:",
                "sudo apt-get update && sudo apt-get install -y nvidia-container-toolkit && sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker",
            )
            .run("验证容器里能看到 GPU：", "Check a container sees the GPUs:", "docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi")
            .evidence(format!("docker runtimes: {}", docker.runtimes.join(", ")))
            .evidence("nvidia-ctk / nvidia-container-cli: not found")
            .build(),
    )
}

/// Docker is installed on a machine that can run it, but its daemon does not answer.
fn daemon_down(docker: &DockerFacts, context: &DiagnoseContext) -> Finding {
    draft(context.lang, "docker.daemon_not_running", Severity::Warning)
        .title("Docker 已安装，但守护进程没有运行", "Docker is installed but its daemon is not running")
        .detail(
            "这台机器可以运行 Docker，但 Docker 命令行连不上守护进程：服务没有启动，或当前用户没有权限访问它。",
            "This machine can run Docker, but the docker command cannot reach its daemon: the service is not started, or this user may not use it.",
        )
        .run("启动 Docker 并设为开机自启：", "Start Docker and have it start at boot:", "sudo systemctl enable --now docker")
        .run("确认守护进程可用：", "Check the daemon answers:", "sudo docker info")
        .when(context.machine == Some(MachineKind::VirtualMachine), |d| {
            d.evidence("provider preset: virtual machines")
        })
        .evidence(docker.daemon_error.clone().unwrap_or_else(|| "docker info: no answer".to_owned()))
        .build()
}

fn ollama(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let Some(ollama) = &facts.ollama else {
        return Vec::new();
    };
    let has_gpu = !gpus(facts).is_empty();
    let lang = context.lang;
    ollama
        .models
        .iter()
        .filter(|m| m.cpu_pct.is_some_and(|c| c > 0) && (has_gpu || m.gpu_pct == Some(0)))
        .map(|model| ollama_offload(lang, model))
        .collect()
}

/// `ollama.cpu_offload` for one loaded model: the rule above, and the Install page's check of a
/// model through the API (`/api/ps`: `size_vram` below `size`).
pub(crate) fn ollama_offload(lang: crate::diagnose::Lang, model: &LoadedModel) -> Finding {
    let all_cpu = model.gpu_pct == Some(0);
    draft(lang, "ollama.cpu_offload", Severity::Warning)
        .subject(model.name.clone())
        .title(
            if all_cpu { format!("Ollama 的 {} 完全跑在 CPU 上", model.name) } else { format!("Ollama 的 {} 有一部分跑在 CPU 上", model.name) },
            if all_cpu { format!("Ollama runs {} entirely on the CPU", model.name) } else { format!("Ollama runs part of {} on the CPU", model.name) },
        )
        .detail(
            if all_cpu { "模型没有用到 GPU，速度会慢一个数量级。通常是驱动没加载好，或 Ollama 的 CUDA 运行库与驱动不匹配。" } else { "显存放不下整个模型（或上下文太长、并发太多），Ollama 把一部分层放到 CPU 上，速度明显下降。" },
            if all_cpu { "The model is not using the GPU at all, so it is an order of magnitude slower. Usually the driver is not working, or Ollama's CUDA runtime does not match the driver." } else { "The model (with its context and parallel requests) does not fit in GPU memory, so Ollama moved some layers to the CPU and slows down markedly." },
        )
        .run("看显存和 Ollama 进程：", "Check GPU memory and the Ollama process:", "nvidia-smi; ollama ps")
        .when(!all_cpu, |d| {
            d.run(
                "缩短上下文、限制并发后重启服务：",
                "Shorten the context and limit parallel requests, then restart the server:",
                "OLLAMA_CONTEXT_LENGTH=4096 OLLAMA_NUM_PARALLEL=1 ollama serve",
            )
            .step("或换用更小的量化版本（如 q4_K_M），或更大显存的卡。", "Or use a smaller quantisation (such as q4_K_M), or a GPU with more memory.")
        })
        .when(all_cpu, |d| {
            d.step("先确认 nvidia-smi 正常，再重装 Ollama 让它带上匹配的 CUDA 运行库。", "Make sure nvidia-smi works, then reinstall Ollama so it brings a matching CUDA runtime.")
        })
        .evidence(format!("ollama ps: {} {} {}", model.name, model.size.as_deref().unwrap_or(""), model.processor.as_deref().unwrap_or("")))
        .build()
}

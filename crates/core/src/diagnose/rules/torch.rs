//! Python and PyTorch: the "why is torch.cuda.is_available() False" question, answered from the
//! driver, the wheel's CUDA build, the GPU's architecture and a real kernel launch.

use super::{
    driver_status, driver_works, gpus, install_wheel_step, major_minor, sm_number, wheel_choice,
};
use crate::catalog::{cuda_families_for_driver, DriverVersion};
use crate::diagnose::text::{draft, Draft};
use crate::diagnose::{DiagnoseContext, Finding, Severity};
use crate::probe::nvidia_smi::NvidiaSmiStatus;
use crate::probe::torch::TorchFacts;
use crate::probe::Facts;

pub(super) fn check(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let mut findings = Vec::new();
    let python_missing = facts.python.as_ref().is_some_and(|p| !p.has_python())
        || facts.torch.as_ref().is_some_and(|t| t.python_missing);
    if python_missing {
        findings.push(python_missing_finding(context));
        return findings;
    }
    let Some(torch) = &facts.torch else {
        return findings;
    };
    if !torch.installed() {
        findings.push(not_installed(torch, facts, context));
        return findings;
    }
    let gpu_present = driver_works(facts);
    if torch.is_cpu_build() {
        if gpu_present {
            findings.push(cpu_build(torch, facts, context));
        }
        return findings;
    }
    let mut explained = false;
    if let Some(finding) = driver_too_old(torch, facts, context) {
        findings.push(finding);
        explained = true;
    }
    if let Some(finding) = arch_unsupported(torch, facts, context) {
        findings.push(finding);
        explained = true;
    }
    if !explained {
        if let Some(finding) = kernel_failed(torch, context) {
            findings.push(finding);
            explained = true;
        }
    }
    if !explained && torch.available == Some(false) {
        findings.push(cuda_unavailable(torch, facts, context));
    }
    findings
}

fn torch_evidence(torch: &TorchFacts) -> Vec<String> {
    let mut lines = vec![format!(
        "torch {} (CUDA build {}), cuda.is_available() = {}",
        torch.version.as_deref().unwrap_or("?"),
        torch.cuda_build.as_deref().unwrap_or("none"),
        torch.available.map_or("?".to_owned(), |a| if a {
            "True".to_owned()
        } else {
            "False".to_owned()
        })
    )];
    if let Some(python) = &torch.python {
        lines.push(format!("python: {python}"));
    }
    for device in &torch.devices {
        lines.push(format!(
            "device: {} (capability {})",
            device.name, device.capability
        ));
    }
    if !torch.arch_list.is_empty() {
        lines.push(format!("arch list: {}", torch.arch_list.join(" ")));
    }
    lines.extend(
        torch
            .warnings
            .iter()
            .map(|w| format!("warning: {}", w.lines().next().unwrap_or(w))),
    );
    if let Some(kernel) = &torch.kernel {
        if let Some(error) = &kernel.error {
            lines.push(format!(
                "kernel launch: {}",
                error.lines().next().unwrap_or(error)
            ));
        }
    }
    lines
}

fn reinstall_steps(d: Draft) -> Draft {
    d.run(
        "先看清装的是哪个版本（+cpu 是 CPU 版，+cu121 之类才带 CUDA）：",
        "See which build is installed (+cpu is CPU-only; +cu121 and the like carry CUDA):",
        "pip show torch | head -n 2; python -c 'import torch; print(torch.__version__, torch.version.cuda)'",
    )
    .step(
        "不要为了这个去改系统的 CUDA：PyTorch 轮子自带 CUDA 运行库，只要驱动够新就行。",
        "Do not change the system CUDA for this: PyTorch wheels bring their own CUDA runtime; only the driver has to be new enough.",
    )
}

fn python_missing_finding(context: &DiagnoseContext) -> Finding {
    draft(context.lang, "python.missing", Severity::Warning)
        .title("没有可用的 Python", "No Python interpreter found")
        .detail(
            "登录环境里找不到 python3 或 python 命令。建议用 Miniconda 管理环境，避免弄乱系统 Python。",
            "Neither python3 nor python is on the login shell's PATH. Miniconda keeps environments separate from the system Python.",
        )
        .run(
            "安装 Miniconda：",
            "Install Miniconda:",
            "wget https://repo.anaconda.com/miniconda/Miniconda3-latest-Linux-x86_64.sh && bash Miniconda3-latest-Linux-x86_64.sh -b -p \"$HOME/miniconda3\" && \"$HOME/miniconda3/bin/conda\" init bash",
        )
        .run("新建一个环境：", "Create an environment:", "conda create -n dl python=3.10 -y && conda activate dl")
        .evidence("command -v python3 python: (nothing)")
        .build()
}

fn not_installed(torch: &TorchFacts, facts: &Facts, context: &DiagnoseContext) -> Finding {
    let error = torch.import_error.clone().unwrap_or_default();
    let absent = error.contains("No module named");
    let d = if absent {
        draft(context.lang, "torch.missing", Severity::Info)
            .title("当前 Python 里没有 PyTorch", "PyTorch is not installed in this Python")
            .detail(
                "训练和大多数推理代码都需要 PyTorch。安装时要选和驱动匹配的 CUDA 版本（下载地址里的 cuXXX）。",
                "Training and most inference code need PyTorch. Install the build whose CUDA (the cuXXX in the index URL) matches the driver.",
            )
            .when(driver_works(facts), |d| {
                d.run(
                    "查看驱动支持的最高 CUDA 版本（nvidia-smi 右上角的 CUDA Version）：",
                    "Check the highest CUDA the driver supports (CUDA Version, top right of nvidia-smi):",
                    "nvidia-smi | head -n 4",
                )
                .when(true, |d| install_wheel_step(d, wheel_choice(facts).as_ref()))
            })
            .when(!driver_works(facts), |d| {
                d.run(
                    "这台机器没有可用的 GPU，CPU 版就够用：",
                    "This machine has no usable GPU, so the CPU build is enough:",
                    "pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cpu",
                )
            })
    } else {
        draft(context.lang, "torch.missing", Severity::Error)
            .title("PyTorch 装了但导入失败", "PyTorch is installed but fails to import")
            .detail(
                format!("import torch 报错：{error}。多为安装不完整或与 Python 版本不匹配，重装即可。"),
                format!("import torch fails: {error}. Usually a broken install or a mismatch with the Python version; reinstall it."),
            )
            .run("卸载后重装：", "Uninstall, then install again:", "pip uninstall -y torch torchvision torchaudio")
    };
    d.evidence(format!(
        "python: {}",
        torch.python.as_deref().unwrap_or("?")
    ))
    .evidence(format!("import torch: {error}"))
    .build()
}

fn cpu_build(torch: &TorchFacts, facts: &Facts, context: &DiagnoseContext) -> Finding {
    draft(context.lang, "torch.cpu_build", Severity::Error)
        .title("装的是 CPU 版 PyTorch", "The installed PyTorch is a CPU-only build")
        .detail(
            format!("这个 torch{} 不带 CUDA，所以 torch.cuda.is_available() 永远是 False，哪怕 GPU 和驱动都正常。常见原因：从默认源或镜像源直接 pip install torch，拿到了 CPU 版。", torch.version.as_deref().map(|v| format!(" {v}")).unwrap_or_default()),
            format!("This torch{} has no CUDA, so torch.cuda.is_available() is always False even though the GPU and driver are fine. The usual cause is a plain `pip install torch` from a default or mirror index that served the CPU build.", torch.version.as_deref().map(|v| format!(" {v}")).unwrap_or_default()),
        )
        .when(true, reinstall_steps)
        .run("卸载 CPU 版：", "Remove the CPU build:", "pip uninstall -y torch torchvision torchaudio")
        .when(true, |d| install_wheel_step(d, wheel_choice(facts).as_ref()))
        .evidence_all(torch_evidence(torch))
        .build()
}

/// CUDA major the wheel was built for above what the driver supports means the driver is
/// too old (minor versions within a major are covered by minor-version compatibility).
fn driver_too_old(torch: &TorchFacts, facts: &Facts, context: &DiagnoseContext) -> Option<Finding> {
    let warned = torch
        .warnings
        .iter()
        .chain(torch.cuda_error.iter())
        .find(|w| {
            w.contains("driver on your system is too old")
                || w.contains("driver version is insufficient")
        });
    let build = torch.cuda_build.as_deref().and_then(major_minor);
    let gpu = facts.gpu.as_ref();
    let driver_cuda = gpu
        .and_then(|g| g.nvidia_smi.cuda_version.as_deref())
        .and_then(major_minor);
    // The catalog knows which CUDA families a driver runs (minor-version compatibility
    // minimums); the header's CUDA Version is the fallback when the driver is unreadable.
    let driver_version = gpu
        .and_then(|g| g.nvidia_smi.driver_version.as_deref())
        .and_then(|v| v.parse::<DriverVersion>().ok());
    let by_version = match (build, &driver_version) {
        (Some((major, _)), Some(driver)) => !cuda_families_for_driver(driver).contains(&major),
        (Some((major, _)), None) => driver_cuda.is_some_and(|(d, _)| major > d),
        (None, _) => false,
    };
    if warned.is_none() && !by_version {
        return None;
    }
    // Unknown versions in words, per language: a "?" on screen reads as a missing text.
    let known = |value: Option<String>, zh: &str, en: &str| match value {
        Some(v) => (v.clone(), v),
        None => (zh.to_owned(), en.to_owned()),
    };
    let (driver, driver_en) = known(
        gpu.and_then(|g| g.nvidia_smi.driver_version.clone()),
        "（版本未知）",
        "(version unknown)",
    );
    let (max, max_en) = known(
        gpu.and_then(|g| g.nvidia_smi.cuda_version.clone()),
        "未知版本",
        "an unknown version",
    );
    let wheel = torch.cuda_build.clone().unwrap_or_default();
    Some(
        draft(context.lang, "torch.driver_too_old", Severity::Error)
            .title(format!("驱动 {driver} 太旧，带不动 CUDA {wheel} 版 PyTorch"), format!("Driver {driver_en} is too old for PyTorch built with CUDA {wheel}"))
            .detail(
                format!("这个 PyTorch wheel 包需要 CUDA {wheel}，而驱动最高只支持 CUDA {max}。驱动版本必须不低于 wheel 包所需 CUDA 对应的最低驱动，否则 CUDA 初始化失败、is_available() 为 False。"),
                format!("This PyTorch wheel needs CUDA {wheel}; the driver supports at most CUDA {max_en}. The driver must meet the minimum for the wheel's CUDA, or CUDA fails to initialise and is_available() is False."),
            )
            .when(true, reinstall_steps)
            .step(
                "两条路：换一个与驱动匹配的 PyTorch wheel 包，或用驱动更新的镜像重建实例。",
                "Two ways out: install a PyTorch wheel the driver can run, or re-create the instance from an image with a newer driver.",
            )
            .when(true, |d| install_wheel_step(d, wheel_choice(facts).as_ref()))
            .evidence(format!("nvidia-smi: driver {driver_en}, CUDA Version {max_en}"))
            .evidence_all(torch_evidence(torch))
            .evidence(warned.cloned().unwrap_or_default())
            .build(),
    )
}

/// `sm_120` / `compute_120` entries as numbers.
fn arch_numbers(arch_list: &[String], prefix: &str) -> Vec<u32> {
    arch_list
        .iter()
        .filter_map(|a| a.strip_prefix(prefix))
        .filter_map(|n| {
            n.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .parse()
                .ok()
        })
        .collect()
}

fn arch_unsupported(
    torch: &TorchFacts,
    facts: &Facts,
    context: &DiagnoseContext,
) -> Option<Finding> {
    let sass = arch_numbers(&torch.arch_list, "sm_");
    let ptx = arch_numbers(&torch.arch_list, "compute_");
    let unsupported: Vec<(String, u32)> = torch
        .devices
        .iter()
        .filter_map(|d| sm_number(&d.capability).map(|sm| (d.name.clone(), sm)))
        .filter(|(_, sm)| {
            // A binary for the same major runs on a later minor (sm_86 code runs on sm_89);
            // PTX for an older arch can be compiled for a newer one at load time.
            !torch.arch_list.is_empty()
                && !sass.iter().any(|s| s / 10 == sm / 10 && s <= sm)
                && !ptx.iter().any(|p| p <= sm)
        })
        .collect();
    let warned = torch
        .warnings
        .iter()
        .find(|w| w.contains("is not compatible with the current PyTorch installation"));
    let no_image = torch
        .kernel
        .as_ref()
        .and_then(|k| k.error.as_ref())
        .filter(|e| e.contains("no kernel image is available"));
    if unsupported.is_empty() && warned.is_none() && no_image.is_none() {
        return None;
    }
    let (name, sm) = unsupported
        .first()
        .cloned()
        .or_else(|| {
            torch
                .devices
                .first()
                .and_then(|d| sm_number(&d.capability).map(|sm| (d.name.clone(), sm)))
        })
        .unwrap_or_else(|| ("GPU".to_owned(), 0));
    let version = torch.version.clone().unwrap_or_default();
    Some(
        draft(context.lang, "torch.arch_unsupported", Severity::Error)
            .title(format!("PyTorch {version} 不支持 {name}（sm_{sm}）"), format!("PyTorch {version} has no code for {name} (sm_{sm})"))
            .detail(
                format!("这个 PyTorch 轮子没有为 sm_{sm} 编译 GPU 代码。is_available() 可能仍是 True，但第一次真正运行就会报 “no kernel image is available for execution on the device”。新架构的卡（如 Blackwell 的 RTX 5090）需要用更新的 CUDA 编出的轮子。"),
                format!("This PyTorch wheel carries no GPU code for sm_{sm}. is_available() may still say True, but the first real kernel fails with \"no kernel image is available for execution on the device\". Newer architectures (such as Blackwell's RTX 5090) need a wheel built with a newer CUDA."),
            )
            .run("卸载当前的轮子：", "Remove the current wheel:", "pip uninstall -y torch torchvision torchaudio")
            .when(true, |d| install_wheel_step(d, wheel_choice(facts).as_ref()))
            .run("确认架构列表里有它：", "Check the architecture is now listed:", "python -c 'import torch; print(torch.cuda.get_arch_list())'")
            .evidence_all(torch_evidence(torch))
            .build(),
    )
}

fn kernel_failed(torch: &TorchFacts, context: &DiagnoseContext) -> Option<Finding> {
    let kernel = torch.kernel.as_ref().filter(|k| !k.ok)?;
    let error = kernel.error.clone().unwrap_or_default();
    let oom = error.to_ascii_lowercase().contains("out of memory");
    Some(
        draft(context.lang, "torch.kernel_failed", Severity::Error)
            .title("CUDA 显示可用，但实际运行失败", "CUDA says available, but a real GPU operation fails")
            .detail(
                if oom { format!("一个只占 4 KiB 的张量都分配失败（{error}）：显存已被别的进程占满。") } else { format!("torch.cuda.is_available() 为 True，但一个最小的 GPU 运算失败了：{error}。这通常是 GPU 或驱动处于异常状态。") },
                if oom { format!("Even a 4 KiB tensor could not be allocated ({error}): other processes have filled the GPU's memory.") } else { format!("torch.cuda.is_available() is True, yet the smallest GPU operation failed: {error}. This usually means the GPU or driver is in a bad state.") },
            )
            .run("看显存和进程：", "Check memory and processes:", "nvidia-smi")
            .run("查看内核里的 Xid 报错：", "Look for Xid errors from the kernel:", "dmesg | grep -i xid | tail -n 20")
            .step("在控制台重启实例；仍失败就联系平台。", "Restart the instance from the console; if it still fails, contact the provider.")
            .evidence_all(torch_evidence(torch))
            .build(),
    )
}

fn cuda_unavailable(torch: &TorchFacts, facts: &Facts, context: &DiagnoseContext) -> Finding {
    let status = driver_status(facts);
    let driver_broken = matches!(
        status,
        Some(
            NvidiaSmiStatus::NotInstalled
                | NvidiaSmiStatus::DriverNotLoaded
                | NvidiaSmiStatus::NoDevices
                | NvidiaSmiStatus::DriverMismatch
        )
    );
    let no_gpu = status == Some(NvidiaSmiStatus::Ok) && gpus(facts).is_empty();
    draft(context.lang, "torch.cuda_unavailable", Severity::Error)
        .title("torch.cuda.is_available() 为 False", "torch.cuda.is_available() is False")
        .detail(
            if driver_broken { "PyTorch 带 CUDA，但驱动本身就不工作（见驱动相关的发现）。先让 nvidia-smi 正常显示显卡，PyTorch 才能用上 GPU。" } else if no_gpu { "这台机器上没有可见的 GPU。" } else { "PyTorch 带 CUDA，驱动也能看到 GPU，但 CUDA 初始化失败。先检查是否把 CUDA_VISIBLE_DEVICES 设成了空或错误的编号。" },
            if driver_broken { "PyTorch has CUDA, but the driver itself is not working (see the driver finding). Get nvidia-smi to show the GPUs first; PyTorch follows." } else if no_gpu { "No GPU is visible on this machine." } else { "PyTorch has CUDA and the driver sees the GPUs, yet CUDA failed to initialise. First check CUDA_VISIBLE_DEVICES is not empty or wrong." },
        )
        .run("第一步永远是看 nvidia-smi：", "The first check is always nvidia-smi:", "nvidia-smi")
        .run("检查可见设备变量：", "Check the visible-devices variable:", "echo \"CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"")
        .evidence_all(torch_evidence(torch))
        .evidence(torch.cuda_error.clone().unwrap_or_default())
        .build()
}
